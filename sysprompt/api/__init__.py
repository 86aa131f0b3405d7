"""The REST API (``docs/api-reference.md``): one view class per operation.

request → view (input serializer validates) → service or selector → output serializer.
"""
