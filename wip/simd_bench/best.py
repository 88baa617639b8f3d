# best-of-N over several runs of the bench binary: python3 best.py BINARY [hot] [N]
import subprocess, sys
binary, args = sys.argv[1], sys.argv[2:3] if len(sys.argv) > 2 and sys.argv[2] == 'hot' else []
n = int(sys.argv[-1]) if sys.argv[-1].isdigit() else 3
best, head, order = {}, None, []
for _ in range(n):
    out = subprocess.run([binary] + args, capture_output=True, text=True).stdout.splitlines()
    head = out[:2]
    for line in out[2:]:
        f = line.split()
        if f[0] not in best: best[f[0]] = [0.0] * (len(f) - 2); order.append(f[0])
        for i, v in enumerate(f[1:-1]):
            if v != '-': best[f[0]][i] = max(best[f[0]][i], float(v))
print(head[0] + f" (best of {n} runs)"); print(head[1])
for t in order:
    v = best[t]; print(f"{t:<8} " + " ".join(f"{x:8.2f}" for x in v) + f"   {max(v[1:]) / v[0]:6.1f}x")
