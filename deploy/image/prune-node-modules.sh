#!/bin/sh
# Removes from a production node_modules (after `npm ci --omit=dev`) what no process of the service
# ever loads, so that the image's dependency layer holds only what runs. Run by the Dockerfile's
# final stage in the same RUN as `npm ci` (files deleted in a later layer would still be shipped),
# and by test/deploy/build.test.ts on a scratch copy of that tree, which then runs the compiled API
# and worker from it. Usage: prune-node-modules.sh [node_modules directory, default ./node_modules]
set -eu
modules="${1:-node_modules}"
bridge="$modules/@temporalio/core-bridge"

# The Temporal SDK's native core ships prebuilt for five platforms (about 27 MB each); the image
# needs its own one only, the one the SDK itself picks at load (core-bridge/common.js).
target="$(node -e "process.stdout.write(require(process.argv[1]).getPrebuiltTargetName())" "$(cd "$bridge" && pwd)/common.js")"
test -f "$bridge/releases/$target/index.node"
for release in "$bridge/releases"/*; do
  if [ "$(basename "$release")" != "$target" ]; then rm -rf "$release"; fi
done
# ...and the Rust sources it was built from.
rm -rf "$bridge/sdk-core" "$bridge/src" "$bridge/bridge-macros" "$bridge/Cargo.toml" "$bridge/Cargo.lock"

# Type declarations and documentation: never loaded at run time (licence and notice files stay).
find "$modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete
find "$modules" -type f -iname '*.md' ! -iname 'licen[cs]e*' ! -iname 'notice*' ! -iname 'copying*' -delete
# The workflow bundler: the workflows were bundled in the build stage (dist/workflow-bundles/), so
# webpack, SWC and what only they need leave (a stub stands in for webpack, which the SDK requires).
node "$(dirname "$0")/drop-workflow-bundler.mjs" "$modules"
# Source maps: nothing reads them any more (webpack's source-map-loader did, bundling at start).
find "$modules" -type f -name '*.map' -delete
