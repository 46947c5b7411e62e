import type { Shell } from './completion.js'

/**
 * `harness shell-init <shell>`: shell code to `eval` that defines `hcd <id>`, a `cd` into a session's worktree
 * that cannot go wrong quietly. `cd "$(harness session path id)"` can: on an error `path` prints nothing, and
 * `cd ""` succeeds in bash and zsh (even under `set -e`), so a script goes on in the folder it was in. `hcd`
 * stops at harness's own error (already on stderr), returns harness's exit code and stays where it was. It goes
 * only to an absolute path (never `-`, never a name CDPATH would look up), with CDPATH empty, and `path` gives
 * only a sealed session's folder inside the project or a worktree folder (docs/security.md, "hcd").
 * Its completion asks the hidden `__complete` for the ids `session path` takes (README, "Jump into a session's worktree").
 */
export function shellInitScript(shell: Shell): string {
  switch (shell) {
    case 'bash':
    case 'zsh':
      return `# harness shell-init ${shell}: eval "$(harness shell-init ${shell})"
hcd() {
  if [ "$#" -ne 1 ] || [ -z "$1" ]; then
    printf '%s\\n' 'usage: hcd <session-id>  (an id, a name, or a unique prefix of 4+ characters)' >&2
    return 2
  fi
  case "$1" in
    -*) printf 'harness: invalid session id: "%s"\\n' "$1" >&2; return 2 ;;
  esac
  local __hcd_dir
  __hcd_dir=$(command harness session path "$1") || return
  case $__hcd_dir in
  /*) ;;
  *)
    printf 'harness: not an absolute path for session "%s": %s\\n' "$1" "$__hcd_dir" >&2
    return 1
    ;;
  esac
  CDPATH= builtin cd -P -- "$__hcd_dir"
}
${shell === 'bash' ? BASH_COMPLETION : ZSH_COMPLETION}`
    case 'fish':
      return `# harness shell-init fish: harness shell-init fish | source
function hcd --description "cd into a harness session's worktree"
    if test (count $argv) -ne 1; or test -z "$argv[1]"
        echo 'usage: hcd <session-id>  (an id, a name, or a unique prefix of 4+ characters)' >&2
        return 2
    end
    if string match -q -- '-*' $argv[1]
        printf 'harness: invalid session id: "%s"\\n' $argv[1] >&2
        return 2
    end
    set -l dir (command harness session path $argv[1])
    set -l code $status
    if test $code -ne 0
        return $code
    end
    if test (count $dir) -ne 1; or not string match -q -- '/*' "$dir[1]"
        printf 'harness: not an absolute path for session "%s": %s\\n' $argv[1] "$dir" >&2
        return 1
    end
    set -l CDPATH
    builtin cd -- $dir[1]
end
complete -c hcd -f -a '(command harness __complete fish -- session path (commandline -ct) 2>/dev/null)'
`
  }
}

const BASH_COMPLETION = `_hcd_complete() {
  [ "$COMP_CWORD" -eq 1 ] || return 0
  local IFS=$'\\n'
  COMPREPLY=($(command harness __complete bash -- session path "\${COMP_WORDS[1]}" 2>/dev/null))
}
complete -F _hcd_complete hcd
`

const ZSH_COMPLETION = `_hcd() {
  (( CURRENT == 2 )) || return 1
  local out
  local -a candidates
  out=$(command harness __complete zsh -- session path "\${words[2]}" 2>/dev/null) || return 1
  [[ -n $out ]] || return 1
  candidates=("\${(@f)out}")
  _describe -t sessions 'session' candidates
}
# An if, not &&: the eval must succeed under set -e when compinit has not run.
if (( $+functions[compdef] )); then compdef _hcd hcd; fi
`
