import { type JobPlan, JobPlanSchema } from './job-plan.js'
import { LOGIN_ENV } from './login-env.js'

/**
 * The files of a run's spool folder that the job script reads and writes (docs/backends.md, "The job script").
 * In: `in.bundle`, `argv`, `env`, `agent-in.tar`. Out: `log` (the agent's output: the job's `--output`),
 * `job.err` (the script's own messages), `node`, `started`, `exit-code` (the truth), `ended-by`,
 * `setup-error`, `out.bundle`, `agent-out.tar`, and `sent` last.
 */
export const RUN_FILES = {
  script: 'job.sh',
  bundleIn: 'in.bundle',
  argv: 'argv',
  env: 'env',
  agentIn: 'agent-in.tar',
  log: 'log',
  jobErr: 'job.err',
  node: 'node',
  started: 'started',
  exitCode: 'exit-code',
  endedBy: 'ended-by',
  setupError: 'setup-error',
  bundleOut: 'out.bundle',
  agentOut: 'agent-out.tar',
  sent: 'sent',
} as const

/** A value as one single-quoted shell word (the plan's values were checked: one line, no NUL). */
function quoted(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`
}

/**
 * harness's own job script for one run, from its plan, parsed with JobPlanSchema on the way in (never cast).
 * Only checked, quoted values of the plan are in the text; the agent's argv is not: the script reads it from
 * `argv` (NUL-separated) into an array, so no byte of a prompt is ever read as shell.
 */
export function jobScript(input: unknown): string {
  const plan: JobPlan = JobPlanSchema.parse(input)
  const header = [
    '#!/bin/bash',
    `# harness's job script for session ${plan.session}, run ${plan.run} (docs/backends.md, "The job script").`,
    "# Written by harness from the run's plan; the agent's argv is read from the spool, never from this text.",
    'set -u',
    'umask 077',
    `RUN_DIR=${quoted(plan.runDir)}`,
    `SESSION=${quoted(plan.session)}`,
    `RUN=${plan.run}`,
    `BRANCH=${quoted(plan.branch)}`,
    `SCRATCH=${quoted(plan.scratch ?? '')}`,
    `WORK_REL=${quoted(plan.workRel)}`,
    `AGENT_PATH=${quoted(plan.path ?? '')}`,
    `WORKTREE_STATE=${plan.worktreeState ? 1 : 0}`,
    `AGENT_FILES=${plan.agentFiles ? 1 : 0}`,
    `STEP_SECONDS=${plan.stepSeconds}`,
  ]
  return `${header.join('\n')}\n${LOGIN_ENV}${BODY}`
}

// The script's body: the same for every run (only the header above differs). bash, for arrays and `read -d ''`.
const BODY = `
say() { printf 'harness job: %s\\n' "$*" >&2; }
# A small result file, whole or not at all: written beside, then renamed.
put() { printf '%s\\n' "$2" >"$RUN_DIR/.$1.part" && mv -f -- "$RUN_DIR/.$1.part" "$RUN_DIR/$1"; }

ended_by=exit
agent=
signals=0
interrupted=0
# TERM: Slurm's --signal=B:TERM before the time limit (or a scancel's). USR1: harness's stop (kill, pause).
# Either goes on to the agent's whole process group as TERM (Slurm signals only this shell); a second one
# kills the group at once.
on_signal() {
  interrupted=1
  [ "$ended_by" = exit ] && ended_by=$1
  signals=$((signals + 1))
  [ -n "$agent" ] || return 0
  local how=-TERM
  [ "$signals" -gt 1 ] && how=-KILL
  kill "$how" -- "-$agent" 2>/dev/null || kill "$how" "$agent" 2>/dev/null
  return 0
}
trap 'on_signal timeout' TERM
trap 'on_signal stop' USR1 INT HUP
# The user's login environment on this node, as --export=NONE would have had slurmd load it (login-env.ts).
login_env

# Every git call: no hooks, no fsmonitor, no system or global config, no prompt, under a deadline (KILL: the
# sending back runs with TERM ignored).
G() {
  GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0 \\
    timeout -s KILL "$STEP_SECONDS" git -c core.hooksPath=/dev/null -c core.fsmonitor=false "$@"
}

# No slurm.scratch: the job's own $TMPDIR (set per node or per job by many sites), else /tmp.
[ -n "$SCRATCH" ] || SCRATCH=\${TMPDIR:-/tmp}
BASE=$SCRATCH/harness-$(id -u)/$SESSION
WORK=$BASE/work
AGENT_DIR=$BASE/agent
SETSID=$(command -v setsid) || SETSID=

finish() {
  cd / && rm -rf -- "$BASE"
  exit "$1"
}
fail() {
  put setup-error "$1"
  say "$1"
  finish 1
}

put node "$(hostname)"
[ -n "$SETSID" ] || fail "setsid is not installed on $(hostname)"
rm -rf -- "$BASE" && mkdir -p -- "$BASE/tmp" "$AGENT_DIR" || fail "cannot make the scratch folder $BASE"
G clone -q --branch "$BRANCH" -- "$RUN_DIR/in.bundle" "$WORK" || fail "cannot clone $BRANCH from the bundle"
G -C "$WORK" remote remove origin || fail "cannot drop the clone's remote"
base=$(G -C "$WORK" rev-parse --verify -q 'HEAD^{commit}') || fail "the clone has no HEAD"
if [ "$WORKTREE_STATE" = 1 ]; then
  wt="refs/harness/$SESSION/worktree"
  { G -C "$WORK" fetch -q -- "$RUN_DIR/in.bundle" "$wt:$wt" &&
    G -C "$WORK" read-tree --reset -u "$wt" && G -C "$WORK" reset -q &&
    G -C "$WORK" update-ref -d "$wt"; } || fail "cannot restore the uncommitted files"
fi
if [ "$AGENT_FILES" = 1 ]; then
  timeout -s KILL "$STEP_SECONDS" tar -C "$AGENT_DIR" -xf "$RUN_DIR/agent-in.tar" ||
    fail "cannot unpack the agent's files"
fi
mkdir -p -- "$AGENT_DIR/home" || fail "cannot make the agent's HOME"
argv=()
while IFS= read -r -d '' arg; do argv+=("$arg"); done <"$RUN_DIR/argv"
[ "\${#argv[@]}" -gt 0 ] || fail "no agent command in $RUN_DIR/argv"
[ -d "$WORK/$WORK_REL" ] || WORK_REL=
[ "$ended_by" = exit ] || { put ended-by "$ended_by"; finish 0; }

# The agent: its own session and process group (setsid, which execs in place: $! is the agent), HOME in its
# folder, its output on this job's --output (the session's log), stdin empty.
(
  export HOME="$AGENT_DIR/home" TMPDIR="$BASE/tmp" HARNESS_SESSION_ID="$SESSION"
  [ -z "$AGENT_PATH" ] || export PATH="$AGENT_PATH"
  while IFS= read -r -d '' pair; do export "$pair"; done <"$RUN_DIR/env"
  cd -- "$WORK/$WORK_REL" && exec "$SETSID" -- "\${argv[@]}" </dev/null
) &
agent=$!
put started "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
# A signal that came before $! was known.
[ "$signals" -gt 0 ] && { kill -TERM -- "-$agent" 2>/dev/null || kill -TERM "$agent" 2>/dev/null; }

# Until the agent has ended (a trapped signal makes wait return early; then it is waited for again).
code=
while [ -z "$code" ]; do
  interrupted=0
  wait "$agent"
  rc=$?
  if [ "$interrupted" = 0 ] || [ "$rc" -le 128 ]; then
    code=$rc
  elif ! kill -0 "$agent" 2>/dev/null; then
    # Gone: either this wait gave its status (a second wait has none) or the shell reaped it meanwhile.
    wait "$agent"
    again=$?
    if [ "$again" = 127 ]; then code=$rc; else code=$again; fi
  fi
done
# What is left of its group (a child that outlived it) goes now; Slurm's cgroup takes the rest at the end.
kill -KILL -- "-$agent" 2>/dev/null
put exit-code "$code"
put ended-by "$ended_by"

# Sending the work back: no signal stops it now (Slurm's KILL after KillWait still would).
trap '' TERM USR1 INT HUP
cd /
commits=none
uncommitted=
index=$BASE/send.index
if tree=$(GIT_INDEX_FILE=$index G -C "$WORK" read-tree HEAD && GIT_INDEX_FILE=$index G -C "$WORK" add -A &&
  GIT_INDEX_FILE=$index G -C "$WORK" write-tree); then
  if [ "$tree" != "$(G -C "$WORK" rev-parse -q --verify 'HEAD^{tree}')" ]; then
    uncommitted=$(GIT_AUTHOR_NAME=harness GIT_AUTHOR_EMAIL=harness@localhost GIT_COMMITTER_NAME=harness \\
      GIT_COMMITTER_EMAIL=harness@localhost G -C "$WORK" commit-tree "$tree" -p HEAD \\
      -m "harness: uncommitted files of session $SESSION, run $RUN") &&
      G -C "$WORK" update-ref refs/harness/uncommitted "$uncommitted" || uncommitted=
  fi
fi
refs=("refs/heads/$BRANCH")
[ -n "$uncommitted" ] && refs+=(refs/harness/uncommitted)
if G -C "$WORK" bundle create -q "$RUN_DIR/.out.bundle.part" "\${refs[@]}" --not "$base" 2>"$BASE/bundle.err"; then
  mv -f -- "$RUN_DIR/.out.bundle.part" "$RUN_DIR/out.bundle" && commits=sent
elif grep -qi 'empty bundle' "$BASE/bundle.err"; then
  commits=none
else
  commits=failed
  say "cannot bundle the work: $(tail -n 1 "$BASE/bundle.err")"
fi
rm -f -- "$RUN_DIR/.out.bundle.part"
agent_files=failed
timeout -s KILL "$STEP_SECONDS" tar -C "$AGENT_DIR" -cf "$RUN_DIR/.agent-out.tar.part" . &&
  mv -f -- "$RUN_DIR/.agent-out.tar.part" "$RUN_DIR/agent-out.tar" && agent_files=sent
put sent "commits=$commits
uncommitted=$uncommitted
agent_files=$agent_files"
finish "$code"
`
