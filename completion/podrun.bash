# bash completion for podrun. Load it in this shell with
#   source <(podrun completion bash)
# or for every shell by writing it to /etc/bash_completion.d/podrun.
#
# podrun itself works out the candidates: `podrun __complete -- WORD...`
# prints one a line ("VALUE<TAB>DESCRIPTION"), and ":files" for file names.

_podrun() {
    local -a words
    local cur line out bcur=${COMP_WORDS[COMP_CWORD]}
    # Split the line up to the cursor at blanks only: bash's own words break
    # at '=' and ':' too, and --wait=ready must reach podrun as one word.
    if [[ -n ${COMP_LINE-} ]]; then
        read -ra words <<<"${COMP_LINE:0:COMP_POINT}"
        [[ ${COMP_LINE:0:COMP_POINT} == *[[:blank:]] ]] && words+=("")
    else
        words=("${COMP_WORDS[@]:0:COMP_CWORD+1}")
    fi
    cur=${words[${#words[@]}-1]}
    COMPREPLY=()
    out=$("${words[0]}" __complete -- "${words[@]:1}" 2>/dev/null) || return 0
    while IFS= read -r line; do
        case $line in
        :files)
            compopt -o default 2>/dev/null || mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
            ;;
        ?*)
            line=${line%%$'\t'*}
            # Bash replaces only its own current word: drop what comes before
            # it (--wait= of --wait=ready).
            [[ $cur != "$bcur" && $cur == *"$bcur" ]] && line=${line#"${cur%"$bcur"}"}
            COMPREPLY+=("$line")
            ;;
        esac
    done <<<"$out"
}

complete -F _podrun podrun
