# Sourced by .ci/run (bash): puts the Node.js release named in .node-version
# on PATH for the rest of the run. The machine's own `node` serves when it is
# of that major version; otherwise the official binary is installed from the
# npm registry (the package node-linux-<arch>: Node's own build with its
# headers, which node-gyp builds native addons against) into
# ${MAYGH_NODE_CACHE:-~/.cache/maygh}/node-<version>, once, and used from there.
# A developer can do the same: `source scripts/use-node.sh` in a bash shell.
want=$(tr -d '[:space:]' < "$(dirname "${BASH_SOURCE[0]}")/../.node-version")
have=$(node -p 'process.versions.node' 2>/dev/null || echo none)
if [ "${have%%.*}" != "${want%%.*}" ]; then
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) arch=$(uname -m) ;;
  esac
  dir="${MAYGH_NODE_CACHE:-$HOME/.cache/maygh}/node-$want"
  pkg="$dir/node_modules/node-linux-$arch"
  if [ ! -x "$pkg/bin/node" ]; then
    echo "use-node: node $have here; installing node $want (node-linux-$arch from the npm registry) into $dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node-linux-$arch@$want"
  fi
  export PATH="$pkg/bin:$PATH"
  export npm_config_nodedir="$pkg"
fi
echo "use-node: node $(node --version), npm $(npm --version)"
