# fish completion for podrun. Write it where fish looks for completions:
#   podrun completion fish > ~/.config/fish/completions/podrun.fish
# or load it in this shell with
#   podrun completion fish | source
#
# podrun itself works out the candidates: `podrun __complete -- WORD...`
# prints one a line ("VALUE<TAB>DESCRIPTION"), and ":files" for file names.

function __podrun_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    for line in ($words[1] __complete -- $words[2..-1] "$cur" 2>/dev/null)
        if test "$line" = :files
            __fish_complete_path "$cur"
        else
            echo $line
        end
    end
end

complete -c podrun -f -a '(__podrun_complete)'
