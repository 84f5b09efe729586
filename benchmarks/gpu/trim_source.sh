#!/usr/bin/env bash
# The GPU check's source (issue 37 §3): a trimmed copy of the pinned llama-cpp-python sdist that
# travels with the command (at most 64 MiB): its Python package (llama_cpp), and of the vendored
# llama.cpp what libllama and ggml's CPU and CUDA backends build from, and gguf-py. No docs,
# models, tests, tools, web UI or other GPU backends.
# Usage: trim_source.sh PYTHON OUT.tar.gz   (LLAMA_SDIST: a .tar.gz already here)
set -euo pipefail
python=$1
out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sdist=${LLAMA_SDIST:-}
if [ -z "$sdist" ]; then
  pin=$(grep -o '"llama-cpp-python[^"]*==[0-9][0-9A-Za-z.]*' pyproject.toml | head -1 | sed 's/.*==//')
  "$python" -m pip download -q --no-binary :all: --no-deps "llama-cpp-python==$pin" -d "$work"
  sdist=$(ls "$work"/llama_cpp_python-*.tar.gz)
fi
tar xzf "$sdist" -C "$work"
root=$(ls -d "$work"/llama_cpp_python-*/)
name=$(basename "$root")
vendor="$name/vendor/llama.cpp"
keep=("$name/llama_cpp" "$vendor/CMakeLists.txt" "$vendor/cmake" "$vendor/include" "$vendor/src"
      "$vendor/common" "$vendor/vendor" "$vendor/gguf-py" "$vendor/ggml/CMakeLists.txt"
      "$vendor/ggml/cmake" "$vendor/ggml/include" "$vendor/ggml/src/CMakeLists.txt"
      "$vendor/ggml/src/ggml-cpu" "$vendor/ggml/src/ggml-cuda" "$vendor/ggml/src/ggml-blas")
for file in "$root"/vendor/llama.cpp/ggml/src/*; do
  [ -f "$file" ] && keep+=("$vendor/ggml/src/$(basename "$file")")
done
[ -d "$root/vendor/llama.cpp/licenses" ] && keep+=("$vendor/licenses")
keep+=("$vendor/LICENSE")
mkdir -p "$(dirname "$out")"
tar czf "$out.tmp" -C "$work" "${keep[@]}"
mv -f "$out.tmp" "$out"
echo "$out: $(du -h "$out" | cut -f1) ($name, trimmed)"
