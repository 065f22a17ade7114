/**
 * Nchan (nginx's pub/sub module) as a peer of the hub in bench/floor.ts: one nginx process (no master,
 * one worker's work in the process it starts, so its CPU and RSS are one /proc entry), on a temp
 * directory and a free loopback port, long-poll subscribers at `/sub/<channel>`, publishers at
 * `/pub/<channel>` (POST, the body is the message), the subscriber count at `/status`. Each channel
 * keeps its last message, as the hub keeps a StateObject's last value. Nothing is installed here: when
 * nginx or the module is missing (Debian: nginx and libnginx-mod-nchan) `startNchan` gives undefined.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Server } from './support.js';
import { owned, sleep } from './support.js';

const MODULE_DIRS = ['/usr/lib/nginx/modules', '/usr/share/nginx/modules', '/usr/local/nginx/modules'];

/** The nginx binary and the Nchan module, or undefined with the reason. */
function findNchan(): { nginx: string; module: string } | { missing: string } {
  const nginx = process.env.BENCH_NGINX ?? 'nginx';
  if (spawnSync(nginx, ['-v']).error) return { missing: `no ${nginx} on the PATH` };
  const module = MODULE_DIRS.map((d) => path.join(d, 'ngx_nchan_module.so')).find((f) => fs.existsSync(f));
  if (!module) return { missing: `no ngx_nchan_module.so in ${MODULE_DIRS.join(', ')}` };
  return { nginx, module };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const config = (dir: string, module: string, port: number) => `
load_module ${module};
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 65536;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 30000; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_timeout 65s;
  keepalive_requests 1000000;
  nchan_shared_memory_size 256M;
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location ~ ^/pub/(\\w+)$ {
      nchan_publisher;
      nchan_channel_id $1;
      nchan_message_buffer_length 1;
    }
    location ~ ^/sub/(\\w+)$ {
      nchan_subscriber longpoll;
      nchan_channel_id $1;
      nchan_subscriber_first_message newest;
      nchan_subscriber_timeout 120s;
    }
    location = /status { nchan_stub_status; }
  }
}
`;

export interface Nchan extends Server {
  /** Long-polls waiting now (nchan_stub_status's subscribers). */
  waiting(): Promise<number>;
}

/** nginx with Nchan on a free port, or `{ missing }` when this machine has no nginx or no module. */
export async function startNchan(): Promise<Nchan | { missing: string }> {
  const found = findNchan();
  if ('missing' in found) return found;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-bench-nchan-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'nginx.conf'), config(dir, found.module, port));
  const proc = owned(
    spawn(found.nginx, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] }),
  );
  let stderr = '';
  proc.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) return { missing: `nginx exited with ${proc.exitCode}: ${stderr.trim()}` };
    const up = await fetch(`${url}/status`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 100) throw new Error(`nginx did not answer on ${url}: ${stderr}`);
    await sleep(50);
  }
  return {
    url,
    pid: proc.pid as number,
    async waiting() {
      const text = await (await fetch(`${url}/status`)).text();
      return Number(/subscribers: (\d+)/.exec(text)?.[1] ?? 0);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => {
          fs.rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        proc.kill('SIGQUIT');
      }),
  };
}
