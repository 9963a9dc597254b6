# Sourced (bash) by scripts/demo.sh and test/conformance/csi-sanity.sh: a work directory, the
# Oxide simulator on a free loopback port with guest device emulation (loop devices: root), a
# node instance in it, and oxide-csi-plugin --mode=all on a unix socket. `stack_cleanup` (set as
# the EXIT trap by stack_init) stops both processes, unmounts what is left below the work
# directory and removes it.

stack_work=""
stack_sim_pid=""
stack_plugin_pid=""
stack_port=""

# stack_init TEMPLATE: the work directory (mktemp TEMPLATE) and a token file in it.
stack_init() {
  stack_work="$(mktemp -d "$1")"
  trap stack_cleanup EXIT
  printf 'oxide-token-%s\n' "$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
    > "$stack_work/token"
  chmod 600 "$stack_work/token"
}

stack_cleanup() {
  [ -n "$stack_plugin_pid" ] && kill "$stack_plugin_pid" 2>/dev/null || true
  [ -n "$stack_sim_pid" ] && kill "$stack_sim_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "$stack_work" ] || return 0
  # Mounts left behind would keep the loop devices busy.
  grep -o " $stack_work/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$stack_work"
}

# stack_start_sim SIM_BINARY PROJECT [FLAG...]: sets stack_port.
stack_start_sim() {
  local binary="$1" project="$2"
  shift 2
  "$binary" --port 0 --token-file "$stack_work/token" --project "$project" \
    --guest-backing-dir "$stack_work/guest" --guest-sysfs-root "$stack_work/guest-sys" "$@" \
    > "$stack_work/sim.out" 2> "$stack_work/sim.log" &
  stack_sim_pid=$!
  for _ in $(seq 200); do [ -s "$stack_work/sim.out" ] && break; sleep 0.05; done
  stack_port="$(head -n 1 "$stack_work/sim.out")"
}

# stack_add_instance PROJECT NAME RUN_STATE: makes a guest-local instance; prints its id.
stack_add_instance() {
  python3 - "$stack_port" "$1" "$2" "$3" <<'PY'
import json, sys, urllib.request
port, project, name, run_state = sys.argv[1:]
body = json.dumps({"project": project, "name": name, "run_state": run_state,
                   "guest_local": True}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{port}/__sim/instances", data=body,
                                 headers={"content-type": "application/json"})
print(json.load(urllib.request.urlopen(request))["id"])
PY
}

# stack_start_plugin PLUGIN_BINARY PROJECT INSTANCE_ID SOCKET [PLUGIN_FLAG...]: waits until the
# socket exists.
stack_start_plugin() {
  mkdir -p "$(dirname "$4")"
  OXIDE_HOST="http://127.0.0.1:$stack_port" OXIDE_TOKEN_FILE="$stack_work/token" \
  OXIDE_PROJECT="$2" OXIDE_INSTANCE_ID="$3" \
    "$1" --mode=all --endpoint="unix://$4" --state-db="$stack_work/state/state.db" \
    --oxide-insecure --sysfs-root="$stack_work/guest-sys" "${@:5}" 2> "$stack_work/plugin.log" &
  stack_plugin_pid=$!
  for _ in $(seq 400); do [ -S "$4" ] && break; sleep 0.05; done
}
