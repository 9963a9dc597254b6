#!/bin/bash
# Test double for cryptsetup on kernels without device-mapper (this machine and CI run a kernel
# with no dm-crypt, so `cryptsetup open` cannot work there). Everything but open, status and close
# goes to the real cryptsetup: luksFormat writes a real LUKS2 header, and open checks the
# passphrase with the real `cryptsetup open --test-passphrase` before it maps anything. The mapping
# itself is a loop device over the disk at the LUKS2 data offset, linked from /dev/mapper/<name>:
# the layout (header, then data) and the rules (a wrong passphrase opens nothing, a mapping in use
# cannot be closed) are real; the data under it is not encrypted. The tests use the real
# cryptsetup wherever the kernel has device-mapper.
#   FAKE_CRYPTSETUP_REAL   the real cryptsetup (default /usr/sbin/cryptsetup)
#   FAKE_CRYPTSETUP_STATE  a directory for the mappings' records and argv.log, every command line
#                          it was called with (default /run/fake-cryptsetup)
#   FAKE_CRYPTSETUP_PASSTHROUGH=1  record the command line, then run the real cryptsetup for every
#                          command (kernels with device-mapper)
#   FAKE_CRYPTSETUP_HOLD_AFTER_FORMAT=FILE  after a luksFormat, create FILE and wait until it is
#                          removed (a test kills the plugin there: a crash between luksFormat and
#                          mkfs)
#   FAKE_CRYPTSETUP_HOLD_IN_FORMAT=FILE  after a luksFormat, remove its key slot (what a luksFormat
#                          stopped between writing the header and adding the slot leaves), create
#                          FILE and wait until it is removed
set -u
real="${FAKE_CRYPTSETUP_REAL:-/usr/sbin/cryptsetup}"
state="${FAKE_CRYPTSETUP_STATE:-/run/fake-cryptsetup}"
mkdir -p "$state"
printf '%s\n' "$*" >>"$state/argv.log"
hold="${FAKE_CRYPTSETUP_HOLD_AFTER_FORMAT:-}"
hold_in="${FAKE_CRYPTSETUP_HOLD_IN_FORMAT:-}"
if [ "${1:-}" = luksFormat ] && { [ -n "$hold" ] || [ -n "$hold_in" ]; }; then
  "$real" "$@" || exit $?
  if [ -n "$hold_in" ]; then
    hold="$hold_in"
    device="${!#}"
    "$real" luksKillSlot -q "$device" 0 </dev/null >/dev/null 2>&1 || exit 1
  fi
  touch "$hold"
  while [ -e "$hold" ]; do sleep 0.05; done
  exit 0
fi
[ "${FAKE_CRYPTSETUP_PASSTHROUGH:-0}" = 1 ] && exec "$real" "$@"
mkdir -p /dev/mapper

# Whether the loop device $1 is mounted or bind-mounted anywhere.
in_use() {
  local number base
  number="$(printf '%d:%d' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")")"
  base="$(basename "$1")"
  awk -v n="$number" -v r="/$base" '$3 == n || $4 == r { found = 1 } END { exit !found }' \
    /proc/self/mountinfo
}

command="${1:-}"
case "$command" in
  open)
    case " $* " in *" --test-passphrase "*) exec "$real" "$@" ;; esac
    shift
    args=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --type) shift 2 ;;
        --type=*|--key-file=-) shift ;;
        --*) echo "fake cryptsetup: unsupported option $1" >&2; exit 1 ;;
        *) args+=("$1"); shift ;;
      esac
    done
    device="${args[0]}"
    name="${args[1]}"
    if [ -e "/dev/mapper/$name" ]; then
      echo "Device $name already exists." >&2
      exit 5
    fi
    "$real" open --test-passphrase --key-file=- "$device" || exit $?
    offset="$("$real" luksDump "$device" | awk '/^Data segments:/ { d = 1 } d && /offset:/ { print $2; exit }')"
    [ -n "$offset" ] || { echo "fake cryptsetup: no data offset in $device's header" >&2; exit 1; }
    loop="$(losetup -f --show -o "$offset" "$device")" || exit 1
    ln -s "$loop" "/dev/mapper/$name"
    echo "$device" >"$state/$name"
    ;;
  status)
    name="$2"
    if [ ! -e "/dev/mapper/$name" ] || [ ! -f "$state/$name" ]; then
      echo "/dev/mapper/$name is inactive."
      exit 4
    fi
    echo "/dev/mapper/$name is active."
    echo "  type:    LUKS2"
    echo "  device:  $(cat "$state/$name")"
    ;;
  close)
    name="$2"
    if [ ! -L "/dev/mapper/$name" ]; then
      echo "Device $name is not active." >&2
      exit 4
    fi
    loop="$(readlink "/dev/mapper/$name")"
    if in_use "$loop"; then
      echo "Device $name is still in use." >&2
      exit 5
    fi
    losetup -d "$loop" || exit 5
    rm -f "/dev/mapper/$name" "$state/$name"
    ;;
  *)
    exec "$real" "$@"
    ;;
esac
