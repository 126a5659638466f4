# zsh -f complete.zsh LINE MATCHES: type LINE and TAB in an interactive zsh
# with compinit and podrun's completion loaded, and write every match the
# completion system adds to the file MATCHES, one a line.
zmodload zsh/zpty || exit 1
zpty z zsh -f -i
zpty -w z 'PS1=""; RPS1=""'
zpty -w z 'autoload -Uz compinit && compinit -u -D'
zpty -w z 'source <(podrun completion zsh)'
# Record what reaches the final compadd (the one that adds matches, not the
# filtering calls with -O, -A or -D that _describe makes).
zpty -w z "compadd() { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return; fi; local -a hits; builtin compadd -A hits \"\$@\"; local r=\$?; print -rl -- \$hits >> ${(q)2}; return \$r; }"
zpty -w z 'print -r -- READY'
zpty -r z line '*READY*' || exit 1
zpty -w -n z "$1"$'\t'
# The completion calls podrun, which asks the runtime: wait for the matches.
for i in {1..100}; do
  [[ -s $2 ]] && break
  sleep 0.2
done
sleep 0.5
zpty -d z
[[ -s $2 ]]
