#!/usr/bin/env bash
# Builds llama.cpp's own llama-server (and llama-quantize) from the vendored llama.cpp inside the
# pinned llama-cpp-python sdist: pip downloads the sdist, nothing else is fetched (no web UI from
# Hugging Face, no curl, no OpenSSL). Usage: build_llama_server.sh PYTHON DEST_BIN [GGML_CUDA=on]
# Environment: JOBS (default 2), LLAMA_SDIST (a .tar.gz already here: skip the download),
# WORK (a folder for the sdist and the build; default a temporary one, removed after).
set -euo pipefail
python=$1
dest=$2
cuda=${3:-off}
jobs=${JOBS:-2}
pin=$("$python" - <<'PY'
import re, pathlib
text = pathlib.Path("pyproject.toml").read_text()
match = re.search(r'"llama-cpp-python(?:\[[^\]]*\])?==([0-9][0-9A-Za-z.]*)', text)
print(match.group(1) if match else "")
PY
)
[ -n "$pin" ] || { echo "error: pyproject.toml pins no llama-cpp-python version" >&2; exit 1; }
work=${WORK:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
sdist=${LLAMA_SDIST:-}
if [ -z "$sdist" ]; then
  "$python" -m pip download -q --no-binary :all: --no-deps "llama-cpp-python==$pin" -d "$work"
  sdist="$work/llama_cpp_python-$pin.tar.gz"
fi
tar xzf "$sdist" -C "$work"
src="$work/llama_cpp_python-$pin/vendor/llama.cpp"
[ -f "$src/tools/server/CMakeLists.txt" ] || { echo "error: $sdist carries no tools/server" >&2; exit 1; }
gpu=OFF
case "$cuda" in on|ON|1|true|GGML_CUDA=on|GGML_CUDA=ON) gpu=ON ;; esac
# The flags make install's llama-cpp-python build uses (Release, native CPU, curl off), with
# static libraries so that the binary stands alone in .venv/bin.
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_CUDA="$gpu" >"$work/cmake.log" 2>&1 \
  || { tail -30 "$work/cmake.log" >&2; exit 1; }
nice -n 10 cmake --build "$work/build" --target llama-server llama-quantize -j "$jobs" >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log" >&2; exit 1; }
mkdir -p "$dest"
for tool in llama-server llama-quantize; do
  install -m 755 "$work/build/bin/$tool" "$dest/$tool.tmp"
  mv -f "$dest/$tool.tmp" "$dest/$tool"
done
echo "built $dest/llama-server and $dest/llama-quantize (llama.cpp of llama-cpp-python $pin, CUDA $gpu)"
