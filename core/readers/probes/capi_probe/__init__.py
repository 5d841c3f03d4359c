"""The C-API probe child, in parts (run through core/readers/probes/ort_capi_child.py)."""
