/**
 * A raw keep-alive HTTP/1.1 connection (net.Socket), for replaying device firmware byte for byte:
 * requests are written as given, answers are read off the same socket in order (Content-Length or
 * chunked bodies), so a desynchronised connection shows up as a wrong answer.
 */
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

export class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  closed = false;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number, localAddress = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port, localAddress }, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  private async more(): Promise<void> {
    if (this.closed) throw new Error('connection closed before a complete answer');
    await new Promise<void>((resolve) => (this.waiting = resolve));
    this.waiting = undefined;
  }

  /** Reads the next complete answer off the connection. */
  async answer(): Promise<RawAnswer> {
    let end: number;
    while ((end = this.buffer.indexOf('\r\n\r\n')) < 0) await this.more();
    const head = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(head[0].split(' ')[1]);
    const headers = new Map(
      head
        .slice(1)
        .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    let at = end + 4;
    let body: Buffer;
    if (headers.get('transfer-encoding') === 'chunked') {
      const chunks: Buffer[] = [];
      for (;;) {
        let lineEnd: number;
        while ((lineEnd = this.buffer.indexOf('\r\n', at)) < 0) await this.more();
        const size = parseInt(this.buffer.subarray(at, lineEnd).toString(), 16);
        while (this.buffer.length < lineEnd + 2 + size + 2) await this.more();
        chunks.push(this.buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(chunks);
    } else {
      const length = Number(headers.get('content-length') ?? 0);
      while (this.buffer.length < at + length) await this.more();
      body = this.buffer.subarray(at, at + length);
      at += length;
    }
    const rest = this.buffer.subarray(at);
    this.buffer = Buffer.from(rest);
    return { status, headers, body: body.toString('utf8') };
  }

  /** Resolves once the server has closed the connection. */
  async closedByServer(): Promise<void> {
    while (!this.closed) await this.more().catch(() => undefined);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The bytes of one request as the Arduino/ESP8266 library writes them (headers carry the identity). */
export function firmwareRequest(
  method: string,
  path: string,
  identity: { SentinelName: string; PackageName: string; AccessKey: string },
  body?: string,
): string {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    `SentinelName: ${identity.SentinelName}`,
    `PackageName: ${identity.PackageName}`,
    `AccessKey: ${identity.AccessKey}`,
    'User-Agent: ESP8266HTTPClient',
    'Connection: keep-alive',
  ];
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}
