"""The C-API probe child, in parts (run through core/probes/ort_capi_child.py)."""
