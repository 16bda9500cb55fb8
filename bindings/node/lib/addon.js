'use strict';
// The native addon, loaded through napi's generated loader (native.js). The loader looks next
// to the package (a build in the source tree), then in the platform package npm installs as an
// optional dependency (`mcpmux-linux-x64-gnu`). When both are missing it throws a generic
// message listing every candidate it tried; a user needs to know what to install instead, so
// that error is replaced by one naming the platform and the package, keeping it as `cause`.

const { name, version, optionalDependencies } = require('../package.json');

/** `linux/x64/glibc`, `darwin/arm64`: the platform as npm's `os`, `cpu` and `libc` fields see it. */
function describePlatform() {
  const { platform, arch } = process;
  return platform === 'linux' ? `${platform}/${arch}/${linuxLibc()}` : `${platform}/${arch}`;
}

function linuxLibc() {
  // What Node itself was linked against, as npm decides `libc` (report.header); musl builds
  // of Node leave glibcVersionRuntime out.
  const header = process.report?.getReport?.()?.header;
  return header?.glibcVersionRuntime ? 'glibc' : 'musl';
}

/** The platform package napi would look for here (its naming: linux-x64-gnu, darwin-arm64, ...). */
function platformPackage() {
  const { platform, arch } = process;
  let suffix = `${platform}-${arch}`;
  if (platform === 'linux') suffix += `-${linuxLibc() === 'glibc' ? 'gnu' : 'musl'}${arch === 'arm' ? 'eabihf' : ''}`;
  if (platform === 'win32') suffix += '-msvc';
  return `${name}-${suffix}`;
}

function isInstalled(pkg) {
  try {
    require.resolve(`${pkg}/package.json`);
    return true;
  } catch {
    return false;
  }
}

/** The message of the error napi's loader met loading `pkg` (its errors are chained through
 * `cause`, one per candidate it tried), e.g. the dynamic linker's. */
function errorOf(pkg, err) {
  for (let e = err; e; e = e.cause) {
    if (typeof e.message === 'string' && e.message.includes(pkg)) return e.message.split('\n')[0];
  }
  return 'see the cause';
}

/** What to tell the user when no addon loaded. */
function missingAddonMessage(err) {
  const here = describePlatform();
  const pkg = platformPackage();
  // A published root package names its platform packages (added when it is packed); a source
  // checkout names none.
  const prebuilt = Object.keys(optionalDependencies ?? {});
  if (isInstalled(pkg)) {
    return `${name}: ${pkg} is installed but its addon does not load on ${here}: ${errorOf(pkg, err)}`;
  }
  if (prebuilt.includes(pkg)) {
    return (
      `${name}: the native addon for ${here} is missing: install its platform package with ` +
      `\`npm install ${pkg}@${version}\` (npm skips it when optional dependencies are omitted, ` +
      'e.g. `--omit=optional`, or when the lockfile was made on another platform)'
    );
  }
  if (prebuilt.length > 0) {
    return `${name}: this platform (${here}) has no prebuilt addon; ${name} ${version} ships addons for ${prebuilt.map((p) => p.slice(name.length + 1)).join(', ')}`;
  }
  return `${name}: no native addon for ${here} next to the package: build it (\`npm run build\` in bindings/node)`;
}

function load() {
  let native;
  try {
    native = require('../native.js');
  } catch (err) {
    throw new Error(missingAddonMessage(err), { cause: err });
  }
  // Each release's addon and JS go together (the JS layer calls what its own addon exports):
  // a platform package of another release is refused here rather than failing later, in a
  // call. napi's loader only compares the platform package's version when asked to
  // (NAPI_RS_ENFORCE_VERSION_CHECK).
  const nativeVersion = typeof native.version === 'function' ? native.version() : 'unknown';
  if (nativeVersion !== version) {
    throw new Error(
      `${name}: the native addon is from release ${nativeVersion}, this package is ${version}: ` +
        `install the same version of both (\`npm install ${name}@${version} ${platformPackage()}@${version}\`)`,
    );
  }
  return native;
}

module.exports = load();
