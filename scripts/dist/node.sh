#!/usr/bin/env bash
# The npm packages, in napi-rs's layout, into $MCPMUX_DIST_DIR/npm (run by scripts/dist.sh):
#   mcpmux-linux-x64-gnu-<v>.tgz  the platform package: the addon alone; its os, cpu and libc
#                                 fields make npm install it on x64 Linux with glibc only
#   mcpmux-<v>.tgz                the root package: JS, types and napi's loader, with every
#                                 platform package as an optional dependency
# The addon is built once (cargo profile `dist`, scripts/dist/toolchain.sh: the compile of
# the core shared with the C library and the wheel) and copied into bindings/node, where the
# source tree's own `require('mcpmux')` finds it too. Then the checks a registry or a user would make: the glibc
# symbol versions it needs, what each tarball holds, attw (are the types right for every way
# of importing) and publint.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root="$PWD"
pkg="$root/bindings/node"
out="${MCPMUX_DIST_DIR:-$root/dist}/npm"
# The Rust target and the glibc floor of the one platform package built here.
# shellcheck source=scripts/dist/toolchain.sh
. scripts/dist/toolchain.sh
platform=linux-x64-gnu
addon="mcpmux.$platform.node"

version="$(node -p "require('$pkg/package.json').version")"

# The dev tools (napi's CLI, attw, publint), at the versions of package-lock.json.
if [[ ! -f "$pkg/node_modules/.package-lock.json" \
    || "$pkg/package-lock.json" -nt "$pkg/node_modules/.package-lock.json" ]]; then
    (cd "$pkg" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "== napi build --profile dist --target $triple"
# Not napi's --cross-compile: it runs `cargo zigbuild`, whose own linker wrapper would make
# cargo compile the core again (scripts/dist/toolchain.sh says why).
(cd "$pkg" && npx napi build --platform --profile dist --target "$triple" \
    --js native.js --dts native.d.ts)

echo "== glibc symbol versions of $addon (at most $glibc_floor)"
check_glibc_floor "$pkg/$addon"

# A platform package of another release would load without complaint from napi's loader
# (unless NAPI_RS_ENFORCE_VERSION_CHECK is set); the JS layer refuses it, this catches it first.
built="$(node -p "require('$pkg/$addon').version()")"
[[ "$built" == "$version" ]] \
    || { echo "dist/node: the addon says version $built, package.json $version" >&2; exit 1; }

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
rm -f "$out"/*.tgz

echo "== platform package mcpmux-$platform"
# napi's own generator writes its package.json (name, version, os, cpu, libc, main, files,
# license, engines, repository) from package.json's napi.targets, as for napi's own releases.
cp "$pkg/package.json" "$stage/"
(cd "$stage" && "$pkg/node_modules/.bin/napi" create-npm-dirs --npm-dir npm >/dev/null)
plat="$stage/npm/$platform"
[[ -f "$plat/package.json" ]] || { echo "dist/node: napi create-npm-dirs made no npm/$platform" >&2; exit 1; }
cp "$pkg/$addon" "$root/LICENSE" "$plat/"
node - "$plat/package.json" "$glibc_floor" <<'EOF'
const fs = require('node:fs');
const [file, glibc] = process.argv.slice(2);
const p = JSON.parse(fs.readFileSync(file, 'utf8'));
p.description = `The native addon of mcpmux for Linux x64 (glibc ${glibc} or later); installed by mcpmux.`;
p.type = 'commonjs';
fs.writeFileSync(file, JSON.stringify(p, null, 2) + '\n');
EOF
cat > "$plat/README.md" <<EOF
# mcpmux-$platform

The native addon of [mcpmux](https://www.npmjs.com/package/mcpmux) $version for Linux on x64
with glibc $glibc_floor or later. Install \`mcpmux\`, not this package: it lists this one as an
optional dependency, which npm installs only on a matching machine.
EOF
(cd "$plat" && npm pack --silent --pack-destination "$out" >/dev/null)

echo "== root package mcpmux"
# What npm would pack from bindings/node ("files": the JS, the types, napi's loader; no addon),
# copied to a staging folder where package.json gains the platform packages as optional
# dependencies, as napi's prepublish does: the committed package.json is also the development
# package, whose `npm ci` must not look for an unpublished package.
rootstage="$stage/mcpmux"
mkdir -p "$rootstage"
(cd "$pkg" && npm pack --dry-run --json --loglevel=error) \
    | node -e 'for (const f of JSON.parse(require("fs").readFileSync(0, "utf8"))[0].files) console.log(f.path)' \
    | while IFS= read -r f; do
        mkdir -p "$rootstage/$(dirname "$f")"
        cp "$pkg/$f" "$rootstage/$f"
    done
cp "$root/LICENSE" "$rootstage/"
node - "$rootstage/package.json" "$platform" <<'EOF'
const fs = require('node:fs');
const [file, ...platforms] = process.argv.slice(2);
const p = JSON.parse(fs.readFileSync(file, 'utf8'));
p.optionalDependencies = Object.fromEntries(platforms.map((t) => [`${p.name}-${t}`, p.version]));
fs.writeFileSync(file, JSON.stringify(p, null, 2) + '\n');
EOF
(cd "$rootstage" && npm pack --silent --pack-destination "$out" >/dev/null)

root_tgz="$out/mcpmux-$version.tgz"
plat_tgz="$out/mcpmux-$platform-$version.tgz"
for f in "$root_tgz" "$plat_tgz"; do
    [[ -f "$f" ]] || { echo "dist/node: npm pack made no $f" >&2; exit 1; }
done
if tar -tzf "$root_tgz" | grep -q '\.node$'; then
    echo "dist/node: the root package carries an addon:" >&2
    tar -tzf "$root_tgz" | grep '\.node$' >&2
    exit 1
fi
[[ "$(tar -tzf "$plat_tgz" | sort | tr '\n' ' ')" \
    == "package/LICENSE package/README.md package/$addon package/package.json " ]] \
    || { echo "dist/node: the platform package holds:" >&2; tar -tzf "$plat_tgz" >&2; exit 1; }

echo "== attw (types for require, import, bundlers, node10)"
# --no-definitely-typed: the package ships its own types; never ask the registry for @types.
(cd "$pkg" && npx attw --no-definitely-typed --format ascii "$root_tgz")
echo "== publint --strict"
# Warnings fail with --strict; suggestions are printed but do not change the exit code, so
# the output is checked for them too.
for f in "$root_tgz" "$plat_tgz"; do
    report="$(cd "$pkg" && npx publint run --strict "$f" 2>&1)" \
        || { echo "$report" >&2; echo "dist/node: publint failed on $f" >&2; exit 1; }
    echo "$report"
    if grep -qi 'suggestion' <<<"$report"; then
        echo "dist/node: publint has suggestions for $f" >&2
        exit 1
    fi
done

echo "== $out"
ls -l "$out"
