# Hostile test bot: forks sleepers at its first decision until fork fails
# (stops itself at 300 processes, so a failed limit does not take the machine).
read -r start
echo '{"type": "ready", "name": "fork_bomb"}'
read -r request
n=0
while [ "$n" -lt 300 ]; do
  sleep 3600 &
  n=$((n + 1))
done
echo "hostile: forked $n processes unchecked" >&2
exit 9
