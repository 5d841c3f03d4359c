"""Build resources/compat/cuda_errors.json from the NVIDIA runtime wheels' headers and libcudart."""
import ctypes, json, re, sys

WHEELS = {
    "11.8": ("cu11/x/nvidia/cuda_runtime", "libcudart.so.11.0", "nvidia-cuda-runtime-cu11 11.8.89"),
    "12.9": ("rt/nvidia/cuda_runtime", "libcudart.so.12", "nvidia-cuda-runtime-cu12 12.9.79"),
    "13.5": ("cu13/x/nvidia/cu13", "libcudart.so.13", "nvidia-cuda-runtime 13.5.37"),
}

def enum_body(src, start):
    i = src.index(start)
    return src[i: src.index("}", i)]

def doc_items(body, prefix):
    out = []
    for m in re.finditer(r"(?:/\*\*(?P<doc>(?:(?!\*/).)*)\*/\s*)?(?P<name>" + prefix + r"\w+)\s*=\s*(?P<num>\d+)", body, re.S):
        doc = " ".join((m.group("doc") or "").replace("*", " ").split())
        doc = re.sub(r"\\ref\s+\S+|\\p\s+|\\note|\\deprecated", "", doc)
        first = re.split(r"(?<=[a-z)])\.\s", doc)[0].strip().rstrip(".")
        out.append((m.group("name"), int(m.group("num")), first))
    return out

runtime, driver = {}, {}
for rel, (folder, so, wheel) in WHEELS.items():
    src = open(f"{folder}/include/driver_types.h").read()
    lib = ctypes.CDLL(f"{folder}/lib/{so}")
    lib.cudaGetErrorString.restype = ctypes.c_char_p
    for name, num, doc in doc_items(enum_body(src, "enum __device_builtin__ cudaError"), "cuda"):
        text = lib.cudaGetErrorString(num).decode()
        e = runtime.setdefault(name, {"name": name, "number": num, "texts": {}, "releases": []})
        e["releases"].append(rel)
        e["texts"][rel] = text
        e["doc"] = doc
        if e["number"] != num:
            print("renumbered", name, e["number"], num, file=sys.stderr)
    dsrc = open(f"{folder}/include/cuda.h").read()
    for name, num, doc in doc_items(enum_body(dsrc, "typedef enum cudaError_enum"), "CUDA_"):
        e = driver.setdefault(name, {"name": name, "number": num, "releases": []})
        e["releases"].append(rel)
        e["doc"] = doc

def rng(rels):
    first = rels[0]
    last = "current" if rels[-1] == "13.5" else rels[-1]
    return f"{first}-{last}"

rt_rows = []
for e in sorted(runtime.values(), key=lambda e: e["number"]):
    texts = sorted(set(e["texts"].values()))
    row = {"number": e["number"], "name": e["name"], "releases": rng(e["releases"])}
    last = e["texts"][e["releases"][-1]]
    row["text"] = last
    if len(texts) > 1:
        row["texts_by_release"] = e["texts"]
    row["doc"] = e["doc"]
    rt_rows.append(row)
drv_rows = [{"number": e["number"], "name": e["name"], "releases": rng(e["releases"]), "doc": e["doc"]}
            for e in sorted(driver.values(), key=lambda e: e["number"])]
doc = {
    "_source": "cudaError_t (driver_types.h) and CUresult (cuda.h) as shipped in the NVIDIA CUDA runtime wheels "
    + ", ".join(w for _, _, w in WHEELS.values())
    + ". Each runtime error's text is what cudaGetErrorString() of that wheel's libcudart returns (called, not copied); "
    "doc is the first sentence of the header's comment. releases: the CUDA releases among 11.8, 12.9 and 13.5 whose headers "
    "define the name ('current' = still in 13.5, the newest wheel read). CUresult texts (cuGetErrorString) live in the driver "
    "library, which no wheel ships, so only the header's doc is kept. Regenerate: scripts/catalogue_cuda_errors.py.",
    "releases_read": list(WHEELS),
    "runtime": rt_rows,
    "driver": drv_rows,
}
json.dump(doc, open(sys.argv[1], "w"), indent=1, ensure_ascii=False)
open(sys.argv[1], "a").write("\n")
print(len(rt_rows), len(drv_rows))
