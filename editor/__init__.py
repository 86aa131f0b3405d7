"""The full-page prompt editor (a placeholder until the editor lands)."""
