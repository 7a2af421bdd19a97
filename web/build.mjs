// Bundles the UI into web/dist: index.html plus one JS and one CSS file under
// assets/, named by content hash so the server can let browsers cache them
// forever (index.html itself is revalidated with an ETag).
// Usage: node build.mjs [--outdir DIR]
import * as esbuild from 'esbuild';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const argOut = process.argv.indexOf('--outdir');
const outdir = argOut > 0 ? path.resolve(process.argv[argOut + 1]) : path.join(here, 'dist');

await rm(outdir, { recursive: true, force: true });
await mkdir(path.join(outdir, 'assets'), { recursive: true });

const result = await esbuild.build({
  entryPoints: { app: path.join(here, 'src/main.js') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome100', 'firefox100', 'safari15'],
  outdir: path.join(outdir, 'assets'),
  entryNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

let js = null, css = null;
for (const file of Object.keys(result.metafile.outputs)) {
  const base = path.basename(file);
  if (base.endsWith('.js')) js = base;
  else if (base.endsWith('.css')) css = base;
}
if (!js || !css) throw new Error(`esbuild produced ${Object.keys(result.metafile.outputs)}`);

await copyFile(path.join(here, 'src/favicon.svg'), path.join(outdir, 'assets/favicon.svg'));
const template = await readFile(path.join(here, 'index.html'), 'utf8');
await writeFile(path.join(outdir, 'index.html'), template.replace('{{JS}}', js).replace('{{CSS}}', css));

const sizes = Object.entries(result.metafile.outputs).map(([f, o]) => `${path.basename(f)} ${o.bytes} B`);
console.log(`web: built ${path.relative(process.cwd(), outdir) || '.'}: ${sizes.join(', ')}`);
