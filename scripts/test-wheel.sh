#!/usr/bin/env bash
# The Python package as a user without Rust gets it (issue 15): builds the wheel with
# `maturin build --release` (abi3, manylinux, extension stripped, the `dptune` command inside),
# checks it with auditwheel, installs it into a fresh venv whose PATH has no cargo or rustc, and
# there runs every ```python snippet of the READMEs and docs (tests/test_doc_snippets.py, the
# same collector the development tests use), `dptune --help` and `dptune tune` on the bundled
# data. Needs Rust (to build) and Python >= 3.10 + pip; creates nothing in the repository but the
# build's target directory, and removes its temporary venvs on exit. Prints the time of each phase.
#
# Environment: PYTHON (default python3), CARGO_TARGET_DIR (respected), DPTUNE_WHEEL_EXTRAS
# (extras installed with the wheel; default sklearn,optuna,torch: what the snippets import, torch
# and opacus for the Opacus one, 5.5 GB with CUDA's libraries. flower and dask pin what
# scripts/test-python.sh installs and tests; here the wheel's metadata must declare all five).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
EXTRAS=${DPTUNE_WHEEL_EXTRAS:-sklearn,optuna,torch}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

command -v cargo >/dev/null || { echo "test-wheel: cargo not found (install Rust)" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dptune-wheel.XXXXXX")
START=$SECONDS
cleanup() {
    local start=$SECONDS
    rm -rf "$TMP"
    echo "== wheel: removing the temporary venvs took $((SECONDS - start)) s; all: $((SECONDS - START)) s"
}
trap cleanup EXIT

fail() { echo "test-wheel: $*" >&2; exit 1; }
# phase NAME COMMAND...: runs COMMAND and prints how long it took.
phase() {
    local name=$1 start=$SECONDS
    shift
    echo "== wheel: $name"
    "$@"
    echo "== wheel: $name took $((SECONDS - start)) s"
}

build() {
    # Same maturin as scripts/test-python.sh; auditwheel is PyPA's manylinux checker.
    "$PY" -m venv "$TMP/build"
    "$TMP/build/bin/python" -m pip install -q "maturin==1.16.0" "auditwheel>=6,<7"
    # The base interpreter (a stable path, unlike this temporary venv's) keeps cargo's build of
    # pyo3 valid from one run to the next; the wheel is abi3 whichever it is.
    local python
    python=$("$PY" -c 'import sys; print(sys.executable)')
    (cd crates/dptune-py && "$TMP/build/bin/maturin" build --release -i "$python" --out "$TMP/dist")
}

check_wheel() {
    local wheels=("$TMP"/dist/dptune-*.whl)
    [ "${#wheels[@]}" -eq 1 ] || fail "expected one wheel, found: ${wheels[*]}"
    WHEEL=${wheels[0]}
    local name tag
    name=$(basename "$WHEEL")
    echo "$name"
    # One wheel for every CPython >= 3.10 (abi3) on Linux distributions with a recent enough glibc.
    [[ $name == dptune-*-cp310-abi3-manylinux_*_x86_64.whl || $name == dptune-*-cp310-abi3-manylinux_*_aarch64.whl ]] ||
        fail "not an abi3 manylinux wheel: $name"
    tag=${name#*-abi3-}
    tag=${tag%%.*}
    # auditwheel checks every ELF file of the wheel (the extension and the dptune binary) against
    # the manylinux policies: the tag it reports must include the one maturin gave the wheel.
    "$TMP/build/bin/auditwheel" show "$WHEEL" | tee "$TMP/auditwheel.txt"
    tr -s ' \n' '  ' <"$TMP/auditwheel.txt" | grep -q "following platform tag: \"$tag\"" ||
        fail "auditwheel does not confirm the tag $tag"
    # The extension and the command, executable and stripped (no debug info, no symbol table;
    # pyelftools comes with auditwheel).
    "$TMP/build/bin/python" - "$WHEEL" <<'PYEOF'
import io, sys, zipfile
from elftools.elf.elffile import ELFFile
wheel = zipfile.ZipFile(sys.argv[1])
files = {i.filename: i for i in wheel.infolist()}
metadata = wheel.read(next(n for n in files if n.endswith(".dist-info/METADATA"))).decode()
for extra in ["sklearn", "torch", "optuna", "flower", "dask"]:
    assert f"Provides-Extra: {extra}\n" in metadata, f"no extra {extra}"
ext = [n for n in files if n.startswith("dptune/_core") and n.endswith(".so")]
cli = [n for n in files if n.endswith(".data/scripts/dptune")]
assert len(ext) == 1 and len(cli) == 1, (ext, cli)
for n in ext + cli:
    assert files[n].external_attr >> 16 & 0o111, f"{n} is not executable"
    elf = ELFFile(io.BytesIO(wheel.read(n)))
    extra = [s.name for s in elf.iter_sections() if s.name.startswith(".debug") or s.name == ".symtab"]
    assert not extra, f"{n} is not stripped: {extra}"
    print(f"{n}: {files[n].file_size / 1e6:.1f} MB, stripped")
PYEOF
}

# The user's side: a fresh venv, and a PATH from which every directory holding cargo, rustc or
# rustup is removed (and Rust's environment variables unset).
NORUST_PATH=$TMP/user/bin
IFS=: read -r -a path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
    [ -n "$d" ] && ! [ -e "$d/cargo" ] && ! [ -e "$d/rustc" ] && ! [ -e "$d/rustup" ] &&
        NORUST_PATH+=":$d"
done
as_user() {
    (cd "$TMP" && env -u CARGO -u CARGO_HOME -u CARGO_TARGET_DIR -u RUSTUP_HOME -u RUSTUP_TOOLCHAIN \
        -u RUSTC -u PYTHONPATH PATH="$NORUST_PATH" VIRTUAL_ENV="$TMP/user" "$@")
}

install() {
    # torch and its CUDA libraries take about 5.5 GB here: say what there is, for a run that fails.
    echo "free disk: $(df -h --output=avail "$TMP" | tail -1)"
    "$PY" -m venv "$TMP/user"
    if as_user "$BASH" -c 'command -v cargo || command -v rustc'; then
        fail "cargo or rustc is still on the user's PATH"
    fi
    as_user python -m pip install -q "$WHEEL[$EXTRAS]" pytest
    # The package and the command come from the fresh venv, nowhere else.
    as_user python -c 'import sys, dptune._core as c; assert c.__file__.startswith(sys.prefix), c.__file__'
    [ "$(as_user "$BASH" -c 'command -v dptune')" = "$TMP/user/bin/dptune" ] ||
        fail "dptune is not the venv's command"
}

snippets() {
    as_user timeout --signal=TERM --kill-after=30 900 \
        python -m pytest -q -p no:cacheprovider "$ROOT/crates/dptune-py/tests/test_doc_snippets.py"
}

cli() {
    as_user dptune --help >/dev/null
    as_user dptune tune
}

phase "build (maturin build --release)" build
phase "check the wheel" check_wheel
phase "install into a fresh venv without Rust (extras: $EXTRAS)" install
phase "README and docs snippets" snippets
phase "the installed dptune command" cli
