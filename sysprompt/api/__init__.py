"""The REST API (``../shared/spec/api.md``): one view class per operation.

request → view (input serializer validates) → service or selector → output serializer.
"""
