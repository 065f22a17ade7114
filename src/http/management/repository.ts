/** The package repository endpoints of the management interface. */
import type Router from '@koa/router';
import fs from 'node:fs';
import path from 'node:path';
import { koaBody } from 'koa-body';
import type { Context } from 'koa';
import { z } from 'zod';
import { nameSchema } from '../../config/names.js';
import { hubError } from '../../errors.js';
import { parseBody, withKeys } from '../bodies.js';
import type { HubServices, HubState } from '../context.js';
import { noContent } from '../context.js';
import { jsonBody, pathName } from '../request.js';
import { checkRequestName } from '../../hub/access/requestNames.js';
import { removeUploadFolder } from '../../hub/packages/repository.js';

const renameBody = withKeys(['newName'], z.object({ newName: nameSchema }));
const downloadBody = withKeys(['url'], z.object({ url: z.string().min(1, 'must not be empty').max(4096) }));

const packageName = (ctx: Context) => pathName(ctx, 'package');

interface UploadedFile {
  filepath: string;
  originalFilename?: string | null;
}

export function registerRepositoryRoutes(router: Router<HubState>, services: HubServices): void {
  const { repository, options, logger } = services;

  router.get('/packages', async (ctx) => {
    ctx.body = await repository.list();
  });
  router.get('/packages/:package', async (ctx) => {
    ctx.body = await repository.get(packageName(ctx));
  });
  router.post('/packages/:package', async (ctx) => {
    const { newName } = parseBody(renameBody, jsonBody(ctx));
    ctx.body = await repository.rename(packageName(ctx), newName);
  });
  router.delete('/packages/:package', async (ctx) => {
    await repository.delete(packageName(ctx));
    noContent(ctx);
  });
  router.get('/packages/:package/icon', async (ctx) => {
    const icon = await repository.icon(packageName(ctx));
    ctx.type = 'image/png';
    ctx.body = icon;
  });
  // The archive as uploaded, streamed as the client reads it (whichever hub process stored it).
  router.get('/packages/:package/archive', async (ctx) => {
    const archive = await repository.archive(packageName(ctx));
    ctx.attachment(archive.fileName);
    ctx.type = 'application/zip';
    ctx.length = archive.size;
    ctx.etag = archive.sha256;
    ctx.body = archive.stream;
  });
  router.get('/packages/:package/settings/:setting/xsd', async (ctx) => {
    const setting = checkRequestName(
      'setting key in the path',
      (ctx.params as Record<string, string>).setting ?? '',
      256,
    );
    ctx.type = 'application/xml; charset=utf-8';
    ctx.body = await repository.xsd(packageName(ctx), setting);
  });

  router.post('/download-package', async (ctx) => {
    const { url } = parseBody(downloadBody, jsonBody(ctx));
    ctx.body = await repository.download(url);
  });

  // Every file part of the form is a package, whatever its field name and whatever its Content-Type,
  // if it has one: a part is a file when its Content-Disposition names a filename (Python's `requests`,
  // as Constellation's ctln uses it, sends none) or it states a type; the archive is judged by its bytes.
  // Each request gets its own parser and its own temp folder, removed whatever happens: when formidable
  // refuses a file (the 11th: 413) it still opens that file's stream just after the refusal, which then
  // fails for want of a folder, or creates its file between the removal's listing and its rmdir. So the
  // removal retries, never throws (an ENOTEMPTY there once turned the 413 into a 500), and runs again
  // once the answer is out. `UploadPackage` is the name Constellation's Console and ctln call it by.
  const uploadPackage = async (ctx: Context): Promise<void> => {
    if (!ctx.is('multipart/form-data')) {
      throw hubError(
        'UnsupportedContentType',
        { expected: "'multipart/form-data', the package archives as files" },
        `Got '${ctx.get('Content-Type') || 'no Content-Type'}'.`,
      );
    }
    const uploadDir = await fs.promises.mkdtemp(path.join(repository.uploadDir, 'upload-'));
    const removeFolder = () => removeUploadFolder(uploadDir, logger);
    ctx.res.once('close', () => setTimeout(() => void removeFolder(), 50).unref());
    const started: string[] = [];
    const parse = koaBody({
      multipart: true,
      json: false,
      text: false,
      urlencoded: false,
      formidable: {
        uploadDir,
        maxFileSize: options.maxPackageBytes,
        maxTotalFileSize: options.maxPackageBytes * 10,
        maxFiles: 10,
        allowEmptyFiles: false,
        onFileBegin: (_name, file) => {
          started.push(file.filepath);
        },
        // formidable takes a part without a Content-Type for a field, filename or not. koa-body does not
        // await handlePart: formidable's listener is still attached before the parser resumes (a
        // nextTick), since opening the file does no I/O first (createDirsFromUploads stays off).
        onPart: (part, handlePart) => {
          if (!part.mimetype && typeof part.originalFilename === 'string') part.mimetype = 'application/octet-stream';
          void handlePart(part);
        },
      },
    });
    try {
      await parse(ctx, async () => undefined);
      const files = Object.values(
        (ctx.request as { files?: Record<string, UploadedFile | UploadedFile[]> }).files ?? {},
      ).flat();
      if (files.length === 0) throw hubError('MissingPackageFile');
      ctx.body = await repository.store(
        files.map((f) => ({ tempPath: f.filepath, fileName: f.originalFilename ?? '' })),
      );
    } finally {
      await Promise.all(started.map((file) => fs.promises.rm(file, { force: true }).catch(() => undefined)));
      await removeFolder();
    }
  };
  router.post('/upload-package', uploadPackage);
  router.post('/UploadPackage', uploadPackage);
}
