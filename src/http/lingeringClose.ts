/**
 * A connection refused before its body was read (413, 415, 408, 429 with `Connection: close`) must not
 * close with that body still arriving: the kernel answers data sent to a closed socket with a reset,
 * which can reach the client before it has read the answer (`fetch failed` instead of the 413: 14
 * times in 20, issue 30). As nginx's lingering close does, the hub sends its answer and its FIN, then
 * reads and discards what keeps arriving until the client closes its side, for at most `LINGER_MS`
 * and `LINGER_BYTES`, and only then closes.
 */
import type http from 'node:http';
import net from 'node:net';

/** How long a refused connection may keep sending its body after the answer (nginx: lingering_time 30 s). */
export const LINGER_MS = 5_000;
/** How much of it the hub reads and discards at most. */
export const LINGER_BYTES = 32 * 1024 * 1024;
/** How often the bytes read are measured against LINGER_BYTES. */
const MEASURE_MS = 20;

/**
 * Makes the connection of `req`, once its answer is out, read and discard the rest of the body before
 * it closes. Nothing to do when the body has arrived whole. Node closes a `Connection: close`
 * connection with `socket.destroySoon()` after the answer: this replaces it for this one socket.
 */
export function lingerAfterAnswer(req: http.IncomingMessage): void {
  if (req.complete) return;
  const socket = req.socket;
  socket.destroySoon = () => linger(socket, req);
}

/** Node's own: ends the socket, and destroys it once what was written is out. */
const { destroySoon } = net.Socket.prototype;

function linger(socket: net.Socket, req: http.IncomingMessage): void {
  if (req.complete || socket.destroyed) return destroySoon.call(socket);
  socket.end();
  const readBefore = socket.bytesRead;
  // Past the time allowed, at once: a client that reads nothing may never let the answer out.
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  // A dumped request's body is dropped by the parser without 'data' events: the socket counts what it read.
  const measure = setInterval(() => {
    if (socket.bytesRead - readBefore > LINGER_BYTES) destroySoon.call(socket);
  }, MEASURE_MS);
  socket.once('close', () => {
    clearTimeout(timer);
    clearInterval(measure);
  });
  // The client's FIN: all it sent has been read.
  socket.once('end', () => destroySoon.call(socket));
  // A body reader that gave up (raw-body past its limit, or a timeout) left the request paused: the
  // parser would stop reading the socket, and the unread bytes would reset it at close.
  req.resume();
}
