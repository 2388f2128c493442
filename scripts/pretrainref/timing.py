# Times train.py's training loop: the wall and process CPU time of the steps after the first
# five (warm-up); tokens per second = steps x batch x sequence length / wall. Arguments: the
# path of train.py, then train.py's own (scripts/pretrainref/throughput.sh runs it).
import sys, time
src = open(sys.argv[1]).read()
sys.argv = sys.argv[1:]
src = src.replace("    opt.step()\n", "    opt.step()\n    if step == 4:\n        T0, C0 = time.time(), time.process_time()\n", 1)
src += "\nT1, C1 = time.time(), time.process_time()\nn = steps_run - 5\nprint(f'TORCH steps {n} wall {T1-T0:.3f} s cpu {C1-C0:.3f} s: {n*B*ids.shape[1]/(T1-T0):.0f} tokens/s, {1e3*(C1-C0)/n:.1f} cpu-ms/step, torch threads {torch.get_num_threads()}', flush=True)\n"
exec(compile(src, "train.py", "exec"))
