/**
 * The worker thread that reads and edits large configuration files for the event loop: a management
 * write's edit (`afterJson` given), or reading a whole file (reload, POST configuration).
 */
import { parentPort } from 'node:worker_threads';
import { editText } from './editText.js';
import { ConfigurationError } from './validate.js';
import { parseConfigurationFile } from './xmlFile.js';

export interface EditRequest {
  id: number;
  text: string;
  /** The configuration wanted, as JSON: edit `text` into it. Absent: read `text` (the reply is JSON). */
  afterJson?: string;
}

export type EditReply = { id: number; text: string } | { id: number; error: string; configuration: boolean };

parentPort?.on('message', ({ id, text, afterJson }: EditRequest) => {
  try {
    const result = afterJson === undefined ? JSON.stringify(parseConfigurationFile(text)) : editText(text, afterJson);
    parentPort?.postMessage({ id, text: result } satisfies EditReply);
  } catch (error) {
    parentPort?.postMessage({
      id,
      error: (error as Error).message,
      configuration: error instanceof ConfigurationError,
    } satisfies EditReply);
  }
});
