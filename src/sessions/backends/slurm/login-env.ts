/**
 * The user's login environment on a node, loaded by the job itself (docs/backends.md, "The submission"): bash
 * that defines `login_env`, for harness's job scripts. Slurm loads it for `--export=NONE` (`su - USER -c env` in
 * slurmd, whose reaping of su then sleeps a second before the job starts); harness submits `--export=ALL` from an
 * environment of Slurm's variables and the named ones only (submitEnvironment), and the job loads it here: the
 * login shell of the user's passwd entry, run as a login shell in the environment `su -` gives it (HOME, USER,
 * LOGNAME, SHELL, the PATH of login.defs, pam_env's files), under a deadline. Each of its variables the job
 * was not given is exported, so what the job was given wins, as with slurmd. Without a passwd entry or
 * past the deadline, the job runs with what it was given (slurmd too). Only in a Slurm job (SLURM_JOB_ID).
 */
export const LOGIN_ENV = `
login_env() {
  [ -n "\${SLURM_JOB_ID-}" ] || return 0
  local given entry user home shell path key file line value pair name
  given=" $(compgen -e | tr '\\n' ' ') "
  path=/usr/local/bin:/bin:/usr/bin key=ENV_PATH
  [ "$(id -u)" = 0 ] && path=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin key=ENV_SUPATH
  line=$(grep -E "^[[:space:]]*$key[[:space:]]" /etc/login.defs 2>/dev/null | tail -n 1)
  line=\${line#*"$key"} && line=\${line//[[:space:]]/} && line=\${line#PATH=}
  [ -n "$line" ] && path=$line
  # Whatever comes of it, a PATH: su's, not bash's own default (which ends in '.').
  trap '[[ $(declare -p PATH 2>/dev/null) == "declare -x"* ]] || export PATH="$path"; trap - RETURN' RETURN
  entry=$(getent passwd "$(id -u)") || return 0
  IFS=: read -r user _ _ _ _ home shell <<<"$entry"
  [ -n "$shell" ] && [ -x "$shell" ] || shell=/bin/sh
  local base=("HOME=$home" "USER=$user" "LOGNAME=$user" "SHELL=$shell" "PATH=$path")
  for file in /etc/environment /etc/default/locale; do
    [ -r "$file" ] || continue
    while IFS= read -r line || [ -n "$line" ]; do
      line=\${line#export }
      [[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
      value=\${BASH_REMATCH[2]} && value=\${value#\\"} && value=\${value%\\"}
      base+=("\${BASH_REMATCH[1]}=$value")
    done <"$file"
  done
  {
    while IFS= read -r line; do [ "$line" = HARNESS-LOGIN-ENV ] && break; done
    while IFS= read -r -d '' pair; do
      name=\${pair%%=*}
      [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
      case "$given PWD OLDPWD SHLVL _ DISPLAY ENVIRONMENT HOSTNAME " in *" $name "*) continue ;; esac
      export "$pair" 2>/dev/null
    done
  } < <(cd "$home" 2>/dev/null || cd /; env -i "\${base[@]}" timeout -s KILL 120 bash -c \\
    'exec -a "-\${1##*/}" "$1" -c "echo; echo HARNESS-LOGIN-ENV; exec env -0"' login-env "$shell" </dev/null 2>/dev/null)
}
`
