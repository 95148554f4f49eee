# bash completion for restoresim (installed by `meson install` as
# share/bash-completion/completions/restoresim; to try it from the tree:
# `source tools/restoresim/restoresim.bash`).
#
# Nothing here lists a command or an option: both are read from the binary being completed
# (the command word as typed, e.g. build/tools/restoresim or restoresim on PATH), from its
# `--help` and each subcommand's `--help` (CLI11's layout: "Subcommands:", "Positionals:" and
# "Options:" sections), so the completion cannot drift from the binary. Values:
#   --scenario, replay's SCENARIO   `restoresim scenarios` (and all)
#   --mutations, --mutation         `restoresim zoo --list` (and all)
#   --strategy                      random, pos, pct:3 (pct:D[:K])
#   an option whose help shows {a,b,c}, e.g. --backend      a, b, c
#   other TEXT options, file positionals                    file names
# Each help text is asked for once per shell (cached by binary and subcommand).
# tools/completion_test.py (suite core) checks the completion against every --help.

declare -gA _restoresim_help_cache=()

# _restoresim_help BIN [SUBCOMMAND...]: the help text, cached.
_restoresim_help() {
  local key="$*"
  if [[ -z ${_restoresim_help_cache[$key]+set} ]]; then
    _restoresim_help_cache[$key]="$("$@" --help 2>/dev/null)"
  fi
  printf '%s\n' "${_restoresim_help_cache[$key]}"
}

# _restoresim_section HELP SECTION: the first word of each entry of one section ("Options",
# "Subcommands", "Positionals"), one a line; options split at their commas (-h,--help).
_restoresim_section() {
  awk -v want="$2:" '
    /^[^ ]/ { in_section = ($0 == want); next }
    in_section && /^  [^ ]/ {
      word = $1
      if (want != "Options:") { print word; next }
      n = split(word, names, ",")
      for (i = 1; i <= n; i++) print names[i]
    }' <<<"$1"
}

# _restoresim_option_line HELP OPTION: the option's entry line ("  --backend TEXT:{sim,...}").
_restoresim_option_line() {
  awk -v opt="$2" '
    /^[^ ]/ { in_options = ($0 == "Options:"); next }
    in_options && /^  -/ {
      n = split($1, names, ",")
      for (i = 1; i <= n; i++) if (names[i] == opt) { print; exit }
    }' <<<"$1"
}

# _restoresim_values BIN HELP OPTION CUR: completes the value of OPTION (COMPREPLY).
_restoresim_values() {
  local bin="$1" help="$2" opt="$3" cur="$4" line words=""
  line="$(_restoresim_option_line "$help" "$opt")"
  case "$opt" in
    --scenario)  # the program names: the first word of each line that is a NAME.NAME
      words="all $("$bin" scenarios 2>/dev/null |
        awk '$1 ~ /^[a-z0-9_]+[.][a-z0-9_.]+$/ {print $1}')"
      ;;
    --mutations|--mutation) words="all $("$bin" zoo --list 2>/dev/null)" ;;
    --strategy) words="random pos pct:1 pct:2 pct:3 pct:4 pct:5" ;;
  esac
  if [[ -z $words && $line =~ \{([^}]*)\} ]]; then
    words="${BASH_REMATCH[1]//,/ }"
  fi
  if [[ -n $words ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
  elif [[ $line =~ ^\ +[^\ ]+\ TEXT ]]; then
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
}

# Whether OPTION (in HELP) takes a value: its entry names a type (TEXT, UINT, INT, FLOAT).
_restoresim_takes_value() {
  [[ $(_restoresim_option_line "$1" "$2") =~ ^\ +[^\ ]+\ [A-Z] ]]
}

# _restoresim_words: words, cword and cur of the line being completed (bash-completion's
# _get_comp_words_by_ref when loaded: it keeps "pct:3" one word; else COMP_WORDS).
_restoresim_words() {
  if declare -F _get_comp_words_by_ref >/dev/null; then
    _get_comp_words_by_ref -n : -w words -i cword -c cur
  else
    words=("${COMP_WORDS[@]}") cword=$COMP_CWORD cur="${COMP_WORDS[COMP_CWORD]}"
  fi
}

# _restoresim_path BIN: after it, `help` is the help text of the subcommand typed so far
# (nested subcommands too), options and their values skipped.
_restoresim_path() {
  local bin="$1" i word path=() prev_takes_value=0
  help="$(_restoresim_help "$bin")"
  for ((i = 1; i < cword; i++)); do
    word="${words[i]}"
    if ((prev_takes_value)); then prev_takes_value=0; continue; fi
    if [[ $word == -* ]]; then
      [[ $word != *=* ]] && _restoresim_takes_value "$help" "$word" && prev_takes_value=1
      continue
    fi
    if _restoresim_section "$help" Subcommands | grep -qxF -- "$word"; then
      path+=("$word")
      help="$(_restoresim_help "$bin" "${path[@]}")"
    fi
  done
}

_restoresim() {
  local words cword cur help bin
  COMPREPLY=()
  _restoresim_words
  bin="${words[0]/#\~/$HOME}"
  type -P "$bin" >/dev/null 2>&1 || [[ -x $bin ]] || return 0
  _restoresim_path "$bin"
  local prev="${words[cword - 1]}"
  # --option=VALUE: bash splits it at '=' (COMP_WORDBREAKS).
  if [[ $prev == = ]] && ((cword > 2)); then prev="${words[cword - 2]}"; fi
  if ((cword > 1)) && [[ $prev == -* ]] && _restoresim_takes_value "$help" "$prev"; then
    _restoresim_values "$bin" "$help" "$prev" "$cur"
  elif [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_restoresim_section "$help" Options)" -- "$cur")
  else
    local subcommands positionals
    subcommands="$(_restoresim_section "$help" Subcommands)"
    positionals="$(_restoresim_section "$help" Positionals)"
    if [[ -n $subcommands ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$subcommands" -- "$cur")
    elif [[ $positionals == scenario* ]]; then
      _restoresim_values "$bin" "$help" --scenario "$cur"
    elif [[ -n $positionals ]]; then
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
  fi
  if declare -F __ltrim_colon_completions >/dev/null; then __ltrim_colon_completions "$cur"; fi
  return 0
}

complete -o filenames -F _restoresim restoresim
