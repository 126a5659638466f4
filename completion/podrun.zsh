#compdef podrun
# zsh completion for podrun. Write it as _podrun to a directory of $fpath
# before compinit runs:
#   podrun completion zsh > /usr/local/share/zsh/site-functions/_podrun
# or load it in this shell (after compinit) with
#   source <(podrun completion zsh)
#
# podrun itself works out the candidates: `podrun __complete -- WORD...`
# prints one a line ("VALUE<TAB>DESCRIPTION"), and ":files" for file names.

_podrun() {
    local -a lines candidates
    local line value files=0
    lines=("${(@f)$(${words[1]} __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    for line in "${lines[@]}"; do
        case $line in
        :files) files=1 ;;
        '') ;;
        *)
            value=${line%%$'\t'*}
            if [[ $line == *$'\t'* ]]; then
                candidates+=("${value//:/\\:}:${line#*$'\t'}")
            else
                candidates+=("${value//:/\\:}")
            fi
            ;;
        esac
    done
    (( ${#candidates} )) && _describe -t podrun podrun candidates
    (( files )) && _files
    return 0
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _podrun "$@"
else
    compdef _podrun podrun
fi
