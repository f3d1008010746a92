#!/usr/bin/env python3
"""Live-migrates the real-guest harness's guest back and forth between two QEMUs whose disks are exported by
qemu-storage-daemon (the control for LiveMigrationIT's -Dkickplug.migration.memcheck=true), and after each
migration compares the guest memory of the paused source with that of the destination, started with -S and not
resumed yet: every page that differs is one the migration lost.

usage: migrate-memcheck.py CACHE WORKDIR MIGRATIONS
(CACHE: the harness's prepared cache, e.g. bundles/vhost-user/target/realguest)
"""
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MEM = 512 << 20
PAGE = 4096


class Qmp:
    def __init__(self, path):
        for _ in range(600):
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                time.sleep(0.2)
        self.f = self.s.makefile('rw')
        self.f.readline()
        self.cmd('qmp_capabilities')

    def cmd(self, name, args=None):
        msg = {'execute': name}
        if args is not None:
            msg['arguments'] = args
        self.f.write(json.dumps(msg) + '\n')
        self.f.flush()
        while True:
            line = self.f.readline()
            if not line:
                raise RuntimeError('QMP closed at ' + name)
            r = json.loads(line)
            if 'event' in r:
                continue
            if 'error' in r:
                raise RuntimeError(name + ': ' + str(r['error']))
            return r['return']


def qsd(work, side):
    args = ['qemu-storage-daemon']
    for disk, queues in (('vda', 2), ('vdb', 1)):
        args += ['--blockdev', f'driver=file,filename={work}/{disk}.img,node-name={disk},locking=off,cache.direct=on',
                 '--export', f'type=vhost-user-blk,id=e-{disk},node-name={disk},addr.type=unix,'
                 f'addr.path={work}/{side}-{disk}.sock,writable=on,num-queues={queues}']
    return subprocess.Popen(args, stdout=open(f'{work}/qsd-{side}.log', 'w'), stderr=subprocess.STDOUT)


def guest(cache, work, side, n, incoming):
    args = ['bash', f'{HERE}/realguest.sh', 'run', cache, f'{work}/{side}-vda.sock', f'{HERE}/jobs/migrate-verify.fio',
            '--queues', '2', '--smp', '2', '--event-idx', 'on', '--sum-mb', '16', '--passes', '100000', '--mem', '512M',
            '--disk2', f'{work}/{side}-vdb.sock', '--qmp', f'{work}/qmp{n}.sock']
    if incoming:
        args += ['--incoming', f'unix:{work}/mig{n}.sock', '--paused']
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=open(f'{work}/guest{n}.log', 'w'),
                            stderr=subprocess.STDOUT)


def compare(a, b):
    diffs = []
    with open(a, 'rb') as fa, open(b, 'rb') as fb:
        for page in range(MEM // PAGE):
            pa = fa.read(PAGE)
            pb = fb.read(PAGE)
            if pa != pb:
                at = [i for i in range(PAGE) if pa[i] != pb[i]]
                diffs.append((page, f'{len(at)}@0x{at[0]:x}:{pa[at[0]]:02x}/{pb[at[0]]:02x}'))
    return diffs


def main():
    cache, work, migrations = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    for disk in ('vda', 'vdb'):
        with open(f'{work}/{disk}.img', 'wb') as f:
            f.truncate(64 << 20)
    daemons = [qsd(work, 'a'), qsd(work, 'b')]
    procs = []
    try:
        time.sleep(2)
        src = guest(cache, work, 'a', 0, False)
        procs.append(src)
        q = Qmp(f'{work}/qmp0.sock')
        deadline = time.time() + 600
        while 'RG-FIO-BEGIN' not in open(f'{work}/guest0.log').read():
            if time.time() > deadline or src.poll() is not None:
                raise RuntimeError('fio did not start')
            time.sleep(1)
        time.sleep(20)
        here, there = 'a', 'b'
        for n in range(1, migrations + 1):
            dst = guest(cache, work, there, n, True)
            procs.append(dst)
            dq = Qmp(f'{work}/qmp{n}.sock')
            while not os.path.exists(f'{work}/mig{n}.sock'):
                time.sleep(0.2)
            q.cmd('migrate-set-parameters', {'max-bandwidth': 1 << 30, 'downtime-limit': 300})
            t0 = time.time()
            q.cmd('migrate', {'uri': f'unix:{work}/mig{n}.sock'})
            while True:
                st = q.cmd('query-migrate')
                if st['status'] in ('completed', 'failed', 'cancelled'):
                    break
                time.sleep(0.5)
            took = time.time() - t0
            if st['status'] != 'completed':
                raise RuntimeError(f'migration {n}: {st}')
            q.cmd('pmemsave', {'val': 0, 'size': MEM, 'filename': f'{work}/mem-src.bin'})
            dq.cmd('pmemsave', {'val': 0, 'size': MEM, 'filename': f'{work}/mem-dst.bin'})
            diffs = compare(f'{work}/mem-src.bin', f'{work}/mem-dst.bin')
            print(f'migration {n} ({here} -> {there}): {took:.1f} s, total-time {st.get("total-time")} ms, '
                  f'dirty-sync-count {st["ram"].get("dirty-sync-count")}, load {os.getloadavg()[0]:.1f}: '
                  f'{len(diffs)} pages differ ' + ' '.join(f'0x{p:x}({k})' for p, k in diffs[:40]), flush=True)
            dq.cmd('cont')
            q.cmd('quit')
            procs[-2].wait(60)
            q = dq
            here, there = there, here
            time.sleep(15)
            if 'Kernel panic' in open(f'{work}/guest{n}.log').read() or dst.poll() is not None:
                print(f'destination {n} ended or panicked: see {work}/guest{n}.log', flush=True)
                break
    finally:
        for p in procs + daemons:
            if p.poll() is None:
                p.kill()


if __name__ == '__main__':
    main()
