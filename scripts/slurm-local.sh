#!/usr/bin/env bash
# slurm-local.sh up|down|status: a real Slurm cluster of one host, for
# running a sharded search (bkcheck check --shards N) as the tasks of a
# Slurm job the way docs/distributed.md describes, on one machine: the
# Slurm tier of the tests (BKCHECK_SLURM=1) and the figures of
# docs/distributed.md come from it.
#
#   up      install slurm-wlm and munge if missing (apt-get), write the
#           configuration, start munged, slurmctld and slurmd, and wait
#           until sinfo shows the node idle. If anything fails on the way,
#           whatever was started is stopped again.
#   down    cancel the cluster's jobs, stop slurmd, slurmctld and munged,
#           and wait until each of them is gone.
#   status  the daemons' pids and sinfo.
#
# Everything lives in one directory the script owns, $BKCHECK_SLURM_DIR
# (default /tmp/bkcheck-slurm): the munge key and socket, slurm.conf, the
# controller's state, the spool, the logs and the pid files. Nothing is
# written to /etc, and the system's own munged or Slurm, if any, are not
# touched: the cluster listens on its own ports ($BKCHECK_SLURM_PORT and
# the one after it, default 16817) and the client commands find it
# through SLURM_CONF, which `up` prints.
#
# The node is this host with its real CPU count (nproc). Jobs that want
# more tasks than CPUs (4 tasks on 2 cores) ask for it with --overcommit.
# Process tracking is proctrack/linuxproc and there is no task plugin, so
# no cgroup is needed: it runs in a container.
#
# Exit status: 0 on success; 1 when a step fails (its message names it and
# the log to read).
set -euo pipefail

DIR=${BKCHECK_SLURM_DIR:-/tmp/bkcheck-slurm}
PORT=${BKCHECK_SLURM_PORT:-16817}
CONF=$DIR/slurm.conf
SOCKET=$DIR/munge/munge.socket
# Seconds to wait for the node to become idle, and for a daemon to exit.
UP_TIMEOUT=${BKCHECK_SLURM_UP_TIMEOUT:-60}
STOP_TIMEOUT=20

die() {
	echo "slurm-local.sh: $*" >&2
	exit 1
}

# alive PID: the process exists and is not a zombie (a daemon whose
# parent is gone is reaped by init; until then it is dead to us).
alive() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

pid_of() { # NAME: the pid in NAME's pid file, if the file exists
	[ -s "$DIR/$1.pid" ] && cat "$DIR/$1.pid"
}

# wait_until SECONDS WHAT COMMAND...: poll COMMAND every 0.2 s until it
# succeeds, at most SECONDS.
wait_until() {
	local limit=$1 what=$2
	shift 2
	local deadline=$((SECONDS + limit))
	until "$@"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "slurm-local.sh: $what did not happen within ${limit}s" >&2
			return 1
		fi
		sleep 0.2
	done
}

not_alive() { ! alive "$1"; }

# stop NAME: TERM the daemon of NAME's pid file, KILL it if it is still
# there after STOP_TIMEOUT seconds, and wait until it is gone.
stop() {
	local pid
	pid=$(pid_of "$1") || return 0
	if alive "$pid"; then
		kill -TERM "$pid" 2>/dev/null || true
		if ! wait_until "$STOP_TIMEOUT" "$1 (pid $pid) exiting on SIGTERM" not_alive "$pid"; then
			kill -KILL "$pid" 2>/dev/null || true
			wait_until 5 "$1 (pid $pid) exiting on SIGKILL" not_alive "$pid" || die "$1 (pid $pid) survives SIGKILL"
		fi
		# Gone, but perhaps a zombie until init reaps it (a daemon's
		# parent is init): give init a moment, so that a `down` followed
		# by a process listing shows nothing left.
		gone() { [ ! -e "/proc/$pid" ]; }
		wait_until 5 "$1 (pid $pid) being reaped by init" gone || true
		echo "stopped $1 (pid $pid)"
	fi
	rm -f "$DIR/$1.pid"
}

install() {
	local missing=()
	for c in munged munge slurmctld slurmd sinfo srun sbatch scontrol squeue scancel; do
		command -v "$c" >/dev/null || missing+=("$c")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "installing slurm-wlm and munge (missing: ${missing[*]})"
	[ "$(id -u)" -eq 0 ] || die "slurm-wlm and munge are missing and installing them needs root"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >"$DIR/apt.log" 2>&1 || die "apt-get update failed; see $DIR/apt.log"
	apt-get install -y -qq slurm-wlm munge >>"$DIR/apt.log" 2>&1 || die "apt-get install slurm-wlm munge failed; see $DIR/apt.log"
}

write_conf() {
	local host cpus
	host=$(hostname -s)
	cpus=$(nproc)
	cat >"$CONF" <<EOF
# Written by scripts/slurm-local.sh: a cluster of one host, $host.
ClusterName=bkcheck
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobRequeue=1
MinJobAge=600
KillWait=10
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

node_idle() {
	local st
	st=$(SLURM_CONF=$CONF sinfo -h -N -o %T 2>/dev/null) || return 1
	[ "$st" = idle ]
}

up() {
	mkdir -p "$DIR"
	install
	if pid=$(pid_of slurmd) && alive "$pid" && node_idle; then
		echo "already up"
		echo "export SLURM_CONF=$CONF"
		return 0
	fi
	# From here on, a failure stops whatever was started.
	trap 'echo "slurm-local.sh: up failed; stopping what it started" >&2; down >&2' EXIT
	down >/dev/null
	mkdir -p "$DIR/munge" "$DIR/ctld" "$DIR/spool" "$DIR/log"
	chmod 700 "$DIR/munge"
	if [ ! -s "$DIR/munge/munge.key" ]; then
		dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
	fi
	chmod 400 "$DIR/munge/munge.key"
	munged --force --key-file="$DIR/munge/munge.key" --socket="$SOCKET" \
		--pid-file="$DIR/munged.pid" --log-file="$DIR/log/munged.log" \
		--seed-file="$DIR/munge/munged.seed" ||
		die "munged did not start; see $DIR/log/munged.log"
	munge_works() { munge -S "$SOCKET" -n 2>/dev/null | unmunge -S "$SOCKET" >/dev/null 2>&1; }
	wait_until 10 "munge credentials round-trip" munge_works || die "munge does not work; see $DIR/log/munged.log"
	write_conf
	slurmctld -f "$CONF" || die "slurmctld did not start; see $DIR/log/slurmctld.log"
	slurmd -f "$CONF" || die "slurmd did not start; see $DIR/log/slurmd.log"
	wait_until "$UP_TIMEOUT" "the node becoming idle in sinfo" node_idle ||
		die "the node is not idle ($(SLURM_CONF=$CONF sinfo -h -N -o '%T %E' 2>&1)); see $DIR/log/"
	trap - EXIT
	echo "up: $(SLURM_CONF=$CONF sinfo -h -N -o '%N %T cpus=%c')"
	echo "export SLURM_CONF=$CONF"
}

down() {
	[ -d "$DIR" ] || return 0
	if pid=$(pid_of slurmctld) && alive "$pid"; then
		# Jobs first: their steps' processes end with them.
		SLURM_CONF=$CONF scancel --full --quiet --user=root 2>/dev/null || true
		no_jobs() { [ -z "$(SLURM_CONF=$CONF squeue -h -o %i 2>/dev/null)" ]; }
		wait_until "$STOP_TIMEOUT" "the jobs ending" no_jobs || true
	fi
	stop slurmd
	stop slurmctld
	stop munged
}

status() {
	local rc=0
	for d in munged slurmctld slurmd; do
		if pid=$(pid_of $d) && alive "$pid"; then
			echo "$d: running (pid $pid)"
		else
			echo "$d: not running"
			rc=1
		fi
	done
	if [ $rc -eq 0 ]; then
		SLURM_CONF=$CONF sinfo -N -o '%N %T %c'
		echo "export SLURM_CONF=$CONF"
	fi
	return $rc
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
*)
	echo "usage: $0 up|down|status (state in \$BKCHECK_SLURM_DIR, default /tmp/bkcheck-slurm)" >&2
	exit 2
	;;
esac
