/** The worker thread that computes management writes' file edits for large configuration files. */
import { parentPort } from 'node:worker_threads';
import { computeEdit } from './editText.js';
import { ConfigurationError } from './validate.js';

export interface EditRequest {
  id: number;
  text: string;
  afterJson: string;
}

export type EditReply = { id: number; text: string } | { id: number; error: string; configuration: boolean };

parentPort?.on('message', ({ id, text, afterJson }: EditRequest) => {
  try {
    parentPort?.postMessage({ id, text: computeEdit(text, afterJson) } satisfies EditReply);
  } catch (error) {
    parentPort?.postMessage({ id, error: (error as Error).message, configuration: error instanceof ConfigurationError } satisfies EditReply);
  }
});
