"""The Python probe child's parts: run by the application's interpreter (Python 3.8+, the standard
library, onnxruntime and numpy; never fallback_doctor). The entry is ../ort_python_child.py, which
puts this folder's parent on sys.path; run_python_probe copies both into the probe's work folder."""
