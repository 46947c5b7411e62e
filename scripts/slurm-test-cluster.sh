#!/usr/bin/env bash
# A throw-away Slurm cluster on this machine, for the tests of the Slurm backend (docs/development/README.md,
# "The Slurm test cluster"): a controller and two compute nodes, each a real daemon in its own network
# namespace with its own address and hostname, on a bridge of its own; munge with its own key and socket.
# Needs root and Debian's `slurmctld slurmd slurm-client munge` (22.05).
#
#   scripts/slurm-test-cluster.sh start [--owner PID] [--hide DIR]... [--show DIR]...   prints the cluster's folder
#   scripts/slurm-test-cluster.sh stop DIR                              stops every daemon by pid, removes all
#   scripts/slurm-test-cluster.sh exec DIR NODE -- COMMAND...           runs a command on a node (its namespaces)
#   scripts/slurm-test-cluster.sh sweep                                 stops the clusters whose owner is gone
#
# Each cluster claims a free slot N (1-250) under $HARNESS_SLURM_TEST_ROOT (default /run/harness-slurm-test):
# its bridge hsbrN, namespaces hsN-ctl, hsN-n1, hsN-n2, addresses 10.217.N.0/24 (the submit host is .1), job
# ids from N*100000+1, munge socket and config in the slot's folder. So several clusters (CI runs, test
# workers) run at once without meeting. `--owner PID`: a watchdog stops the cluster once that process is gone
# (a test worker killed without running its exit hooks leaves nothing behind). `--hide DIR`: the nodes see an
# empty read-only folder there (the submitter's repositories); the slot's folder (spool, config) stays visible.
# `--show DIR`: a folder under a hidden one that the nodes still see (installed agent CLIs, a software share).
# `cluster.env` in the folder holds what a shell or a test needs (SLURM_CONF, addresses, node names, pids).
set -euo pipefail

ROOT=${HARNESS_SLURM_TEST_ROOT:-/run/harness-slurm-test}
SELF=$(readlink -f "$0")
SUBNET_BASE=10.217
# The per-daemon ceiling for coming up (a loaded 2-core machine is slow, an idle one takes about a second).
READY_SECONDS=${HARNESS_SLURM_READY_SECONDS:-90}

die() {
  echo "slurm-test-cluster: $*" >&2
  exit 1
}

need_tools() {
  local missing=()
  for tool in slurmctld slurmd sbatch scontrol munged mungekey ip nsenter unshare setpriv flock; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  ((${#missing[@]} == 0)) || die "missing: ${missing[*]} (apt-get install slurmctld slurmd slurm-client munge)"
  [[ $(id -u) == 0 ]] || die "needs root (network namespaces, mounts, daemons as root)"
}

# The start time of a process (field 22 of /proc/PID/stat), so that a reused pid is never taken for it.
start_time() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  # After ") " the fields start at 3 (state): the start time is the 20th of them.
  set -- $stat
  echo "${20}"
}

# Whether PID is still the process that started at START (a zombie counts as gone: it only waits to be reaped,
# and pid 1 of some machines reaps slowly).
alive() { # PID START
  local stat
  [[ -n $1 ]] && stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  set -- "$2" $stat
  [[ $2 != Z && ${21} == "$1" ]]
}

# ---------------------------------------------------------------------------------------------------- start

claim_slot() { # OWNER OWNER_START -> prints the slot number, its folder made
  mkdir -p "$ROOT"
  chmod 755 "$ROOT"
  exec 9>"$ROOT/.lock"
  flock -w 120 9 || die "could not lock $ROOT/.lock"
  local n
  for n in $(seq 1 250); do
    local dir=$ROOT/c$n
    if [[ -d $dir ]]; then
      stale "$dir" || continue
      "$SELF" stop "$dir" >/dev/null 2>&1 || true
      [[ -d $dir ]] && continue
    fi
    # A range or bridge someone else uses (a leftover, another network): not this one.
    ip -o link show "hsbr$n" >/dev/null 2>&1 && continue
    ip -o route | grep -q "^$SUBNET_BASE\.$n\." && continue
    mkdir "$dir"
    printf '%s %s\n' "$1" "$2" >"$dir/owner"
    echo "$n"
    exec 9>&-
    return 0
  done
  exec 9>&-
  die "no free slot under $ROOT (250 clusters?)"
}

# A cluster whose owner is gone (its watchdog died with it, or start was killed half-way).
stale() {
  local owner start
  [[ -f $1/owner ]] || return 0
  read -r owner start <"$1/owner" || return 0
  [[ $owner == none ]] && return 1
  ! alive "$owner" "$start"
}

cgroup_lines() {
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    # cgroup v2 (unified): slurmd makes its own subtree; there is no systemd to ask in a test machine.
    printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\nIgnoreSystemdOnFailure=yes\n'
  else
    # cgroup v1: without a mountpoint, steps fail with "cgroup namespace 'freezer' not mounted".
    printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=/sys/fs/cgroup\n'
  fi
  printf 'ConstrainCores=no\nConstrainRAMSpace=no\nConstrainDevices=no\n'
}

write_config() { # DIR N
  local dir=$1 n=$2 net=$SUBNET_BASE.$2
  cat >"$dir/etc/slurm.conf" <<CONF
# Written by scripts/slurm-test-cluster.sh for a test cluster; removed when it stops.
ClusterName=hs$n
SlurmctldHost=hs$n-ctl($net.2)
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/slurmd/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# cgroup tracking is what makes a cancel kill a double-forked or setsid child (linuxproc lets them live).
ProctrackType=proctrack/cgroup
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Schedule at once rather than on the next tick.
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
# Finished jobs stay visible to squeue and scontrol for 10 minutes (no slurmdbd here).
MinJobAge=600
KillWait=5
ReturnToService=2
MailProg=/bin/true
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
FirstJobId=$((n * 100000 + 1))
SlurmdParameters=config_overrides
NodeName=DEFAULT CPUs=4 RealMemory=1000 State=UNKNOWN
NodeName=hs$n-n1 NodeAddr=$net.11
NodeName=hs$n-n2 NodeAddr=$net.12
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=second Nodes=ALL MaxTime=INFINITE State=UP
CONF
  cgroup_lines >"$dir/etc/cgroup.conf"
}

start_munge() { # DIR
  local dir=$1
  mkdir -p "$dir/munge"
  mungekey -c -k "$dir/munge/munge.key"
  chown -R munge:munge "$dir/munge"
  chmod 700 "$dir/munge"
  chmod 400 "$dir/munge/munge.key"
  # The socket's folder must be reachable by clients (root here); the key stays the munge user's.
  chmod 711 "$dir/munge"
  setpriv --reuid=munge --regid=munge --clear-groups -- munged --foreground \
    --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
    --log-file="$dir/munge/munged.log" </dev/null >>"$dir/log/munged.out" 2>&1 &
  echo "$! $(start_time $!)" >"$dir/run/munged.pid"
}

# One namespace on the bridge: NAME ADDRESS VETH-PREFIX
add_host() {
  local ns=$1 address=$2 veth=$3 bridge=$4
  ip netns add "$ns"
  ip link add "${veth}h" type veth peer name "${veth}p"
  ip link set "${veth}p" netns "$ns"
  ip -n "$ns" link set "${veth}p" name eth0
  ip -n "$ns" addr add "$address/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip link set "${veth}h" master "$bridge" up
}

joined() { # WORD... → the words joined by ':'
  local IFS=:
  echo "$*"
}

start_daemons() { # DIR N HIDES SHOWS (each a :-separated list)
  local dir=$1 n=$2 hides=$3 shows=$4
  local net=$SUBNET_BASE.$n bridge=hsbr$n
  ip link add "$bridge" type bridge
  # Bridged frames skip iptables where the kernel allows it (a FORWARD policy of DROP would cut the nodes off).
  ip link set "$bridge" type bridge nf_call_iptables 0 2>/dev/null || true
  ip addr add "$net.1/24" dev "$bridge"
  ip link set "$bridge" up
  add_host "hs$n-ctl" "$net.2" "hs${n}c" "$bridge"
  add_host "hs$n-n1" "$net.11" "hs${n}a" "$bridge"
  add_host "hs$n-n2" "$net.12" "hs${n}b" "$bridge"
  # nsenter and unshare exec (neither forks without --pid), so $! is the daemon itself: stopped by that pid.
  # Not `ip netns exec`: it remounts /sys, which hides the cgroup tree proctrack/cgroup needs.
  nsenter --net="/run/netns/hs$n-ctl" -- unshare --uts -- \
    sh -c 'hostname "$1"; exec slurmctld -D -i -f "$2"' sh "hs$n-ctl" "$dir/etc/slurm.conf" \
    </dev/null >>"$dir/log/slurmctld.out" 2>&1 &
  echo "$! $(start_time $!)" >"$dir/run/ctl.pid"
  local node
  for node in n1 n2; do
    mkdir -p "$dir/slurmd/hs$n-$node"
    # Its own mount namespace: node-local scratch (a tmpfs at the same path on every node), the hidden
    # folders empty and read-only; everything else (the slot's folder with the spool) as the host has it.
    # A shown folder under a hidden one (the agents' installed tools, as a site's software share) is bound
    # aside before the hiding and moved back into it after.
    HIDES=$hides SHOWS=$shows STAGE=$dir/slurmd/hs$n-$node/shown \
      nsenter --net="/run/netns/hs$n-$node" -- unshare --uts --mount --propagation slave -- \
      sh -c 'name=$1 conf=$3
        set -f
        IFS=:
        hostname "$name" && mount -t tmpfs -o size=512m,mode=1777 tmpfs "$2" || exit 1
        i=0
        for show in $SHOWS; do
          i=$((i + 1)) && mkdir -p "$STAGE/$i" && mount --bind "$show" "$STAGE/$i" || exit 1
        done
        for hide in $HIDES; do mount -t tmpfs -o size=16k,mode=755 tmpfs "$hide" || exit 1; done
        i=0
        for show in $SHOWS; do
          i=$((i + 1)) && mkdir -p "$show" && mount --move "$STAGE/$i" "$show" || exit 1
        done
        for hide in $HIDES; do mount -o remount,ro "$hide" || exit 1; done
        unset HIDES SHOWS STAGE
        exec slurmd -D -N "$name" -f "$conf"' \
      sh "hs$n-$node" "$dir/scratch" "$dir/etc/slurm.conf" \
      </dev/null >>"$dir/log/slurmd-$node.out" 2>&1 &
    echo "$! $(start_time $!)" >"$dir/run/$node.pid"
  done
}

wait_until() { # WHAT COMMAND...
  local what=$1 deadline=$((SECONDS + READY_SECONDS))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}

nodes_idle() {
  local states
  states=$(SLURM_CONF=$1 sinfo -h -N -p main -o '%N %t' 2>/dev/null) || return 1
  [[ $(grep -c ' idle$' <<<"$states") == 2 ]]
}

start() {
  local owner=none hides=() shows=()
  while (($#)); do
    case $1 in
      --owner) owner=$2; shift 2 ;;
      --hide) hides+=("$(readlink -f "$2")"); shift 2 ;;
      --show) shows+=("$(readlink -f "$2")"); shift 2 ;;
      *) die "unknown argument: $1" ;;
    esac
  done
  need_tools
  local owner_start=none
  if [[ $owner != none ]]; then
    owner_start=$(start_time "$owner") || die "no process $owner (--owner)"
  fi
  local n
  n=$(claim_slot "$owner" "$owner_start")
  local dir=$ROOT/c$n
  for hide in "${hides[@]}"; do
    [[ $hide != / && $dir/ != "$hide"/* ]] || die "--hide $hide would hide the cluster's own folder"
  done
  # Whatever fails from here on stops what was started.
  trap '"$SELF" stop "$dir" >/dev/null 2>&1 || true' EXIT
  mkdir -p "$dir"/{etc,state,run,log,spool,scratch,bin}
  chmod 755 "$dir"
  # The shared folder the submit host and the nodes both see (a site's shared filesystem): harness's spool
  # goes here. Sticky and world-writable, as /tmp: each user's folder in it is their own (0700).
  chmod 1777 "$dir/spool"
  write_config "$dir" "$n"
  start_munge "$dir"
  wait_until munge test -S "$dir/munge/munge.socket" || die "munged did not start (see $dir/log)"
  for hide in "${hides[@]}" "${shows[@]}"; do [[ $hide != *:* ]] || die "$hide: a folder with ':' in its name"; done
  start_daemons "$dir" "$n" "$(joined "${hides[@]}")" "$(joined "${shows[@]}")"
  local conf=$dir/etc/slurm.conf
  wait_until slurmctld env SLURM_CONF="$conf" scontrol ping || die "slurmctld did not answer (see $dir/log)"
  wait_until nodes nodes_idle "$conf" || die "the nodes did not come up (see $dir/log)"
  {
    echo "SLURM_CONF=$conf"
    echo "CLUSTER_NAME=hs$n"
    echo "CLUSTER_SLOT=$n"
    echo "SUBMIT_ADDRESS=$SUBNET_BASE.$n.1"
    echo "CONTROLLER_ADDRESS=$SUBNET_BASE.$n.2"
    echo "NODES=hs$n-n1 hs$n-n2"
    echo "NODE_ADDRESSES=$SUBNET_BASE.$n.11 $SUBNET_BASE.$n.12"
    echo "SPOOL=$dir/spool"
    echo "SCRATCH=$dir/scratch"
    echo "BIN=$dir/bin"
    echo "FIRST_JOB_ID=$((n * 100000 + 1))"
  } >"$dir/cluster.env"
  if [[ $owner != none ]]; then
    # The watchdog: stops the cluster once its owner is gone. In its own session, with no terminal or pipe.
    setsid "$SELF" watch "$owner" "$owner_start" "$dir" </dev/null >/dev/null 2>&1 &
    echo "$! $(start_time $!)" >"$dir/run/watchdog.pid"
  fi
  trap - EXIT
  echo "$dir"
}

# ---------------------------------------------------------------------------------------------------- stop

stop_pidfile() { # FILE SIGNAL: signals the process the file names if it is still that process
  local pid start
  [[ -f $1 ]] || return 0
  read -r pid start <"$1" || return 0
  alive "$pid" "$start" && kill "-$2" "$pid" 2>/dev/null
  return 0
}

wait_gone() { # FILE...: until none of the processes named lives (ceiling 30 s, then SIGKILL)
  local file pid start deadline=$((SECONDS + 30))
  for file in "$@"; do
    [[ -f $file ]] || continue
    read -r pid start <"$file" || continue
    while alive "$pid" "$start"; do
      if ((SECONDS >= deadline)); then kill -KILL "$pid" 2>/dev/null; fi
      sleep 0.05
    done
  done
}

stop() { # DIR
  local dir=${1%/}
  # Only a slot folder of $ROOT: everything in it is removed.
  [[ -d $dir && ${dir##*/} =~ ^c[0-9]+$ && $(readlink -f "${dir%/*}") == "$(readlink -f "$ROOT")" ]] ||
    die "not a test cluster's folder (one of $ROOT/c<N>): $1"
  local n=${dir##*/c}
  # The watchdog first, unless it is the one stopping.
  local wpid wstart
  if [[ -f $dir/run/watchdog.pid ]]; then
    read -r wpid wstart <"$dir/run/watchdog.pid" || true
    [[ ${wpid:-} != "$$" && ${wpid:-} != "$PPID" ]] && stop_pidfile "$dir/run/watchdog.pid" KILL
  fi
  local daemons=("$dir/run/n1.pid" "$dir/run/n2.pid" "$dir/run/ctl.pid")
  for file in "${daemons[@]}"; do stop_pidfile "$file" KILL; done
  wait_gone "${daemons[@]}"
  # What the nodes still run (slurmstepd outlives slurmd; a job's processes): every process in a namespace.
  local ns
  for ns in "hs$n-n1" "hs$n-n2" "hs$n-ctl"; do
    local deadline=$((SECONDS + 30)) pids
    while pids=$(ip netns pids "$ns" 2>/dev/null) && [[ -n $pids ]]; do
      kill -KILL $pids 2>/dev/null || true
      ((SECONDS < deadline)) || break
      sleep 0.05
    done
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "hsbr$n" 2>/dev/null || true
  stop_pidfile "$dir/run/munged.pid" KILL
  wait_gone "$dir/run/munged.pid"
  # The cgroups slurmd made for its jobs (slurm_<node> in each hierarchy: the nodes' names are this slot's).
  local cg
  for cg in /sys/fs/cgroup/slurm_hs$n-n[12] /sys/fs/cgroup/*/slurm_hs$n-n[12]; do
    [[ -d $cg ]] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  rm -rf "$dir"
}

# The watchdog: waits while OWNER (with its start time) lives, then stops the cluster (exec: it is the stop).
watch() { # OWNER START DIR
  while alive "$1" "$2"; do sleep 1; done
  exec "$SELF" stop "$3"
}

sweep() {
  [[ -d $ROOT ]] || return 0
  local dir
  for dir in "$ROOT"/c*; do
    [[ -d $dir ]] && stale "$dir" && "$SELF" stop "$dir"
  done
  return 0
}

run_on() { # DIR NODE -- COMMAND...
  local dir=${1%/} node=$2 pid start
  shift 2
  [[ ${1:-} == -- ]] && shift
  read -r pid start <"$dir/run/$node.pid" || die "no node $node in $dir"
  alive "$pid" "$start" || die "node $node is not running"
  exec nsenter --target "$pid" --net --uts --mount -- "$@"
}

case ${1:-} in
  start) shift; start "$@" ;;
  stop) stop "${2:?stop DIR}" ;;
  sweep) sweep ;;
  watch) watch "$2" "$3" "$4" ;;
  exec) shift; run_on "$@" ;;
  *) die "usage: $0 start [--owner PID] [--hide DIR]... [--show DIR]... | stop DIR | exec DIR NODE -- COMMAND... | sweep" ;;
esac
