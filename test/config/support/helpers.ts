/**
 * @module helpers — shared helpers for the config tests: fixture paths, an in-memory file system, a recording exec runner.
 */
import path from 'node:path'
import type { ExecRunner, ExecRunRequest, ExecRunResult } from '../../../src/config/exec-plugin-runner.ts'
import type { ReadTextFile } from '../../../src/config/read-text-file.ts'

/** Absolute path of `test/config/fixtures/<parts>`. */
export function fixture(...parts: string[]): string {
  return path.join(import.meta.dirname, '..', 'fixtures', ...parts)
}

/** A {@link ReadTextFile} over an in-memory map; unknown paths reject with ENOENT like `fs`. */
export function memoryFiles(
  files: Record<string, string>,
  fallback?: ReadTextFile,
): ReadTextFile & { reads: string[] } {
  const reads: string[] = []
  const read = async (file: string): Promise<string> => {
    reads.push(file)
    const content = files[file]
    if (content !== undefined) return content
    if (fallback) return fallback(file)
    throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: 'ENOENT' })
  }
  return Object.assign(read, { reads })
}

/** An {@link ExecRunner} that records requests and answers with `respond`. */
export function recordingRunner(
  respond: (request: ExecRunRequest, call: number) => ExecRunResult | Promise<ExecRunResult>,
): ExecRunner & { requests: ExecRunRequest[] } {
  const requests: ExecRunRequest[] = []
  const run = async (request: ExecRunRequest): Promise<ExecRunResult> => {
    requests.push(request)
    return respond(request, requests.length)
  }
  return Object.assign(run, { requests })
}

/** A successful plugin run printing an ExecCredential with `status`. */
export function credentialOutput(apiVersion: string, status: Record<string, unknown>): ExecRunResult {
  return { exitCode: 0, stdout: JSON.stringify({ apiVersion, kind: 'ExecCredential', status }) }
}

/** Every string an error exposes: message, String(), stack, JSON of own props, along the cause chain. */
export function errorTexts(err: unknown): string[] {
  const out: string[] = []
  let e: unknown = err
  for (let depth = 0; e !== undefined && e !== null && depth < 10; depth++) {
    out.push(String(e))
    if (typeof e === 'object') {
      const o = e as { message?: unknown; stack?: unknown; cause?: unknown }
      out.push(String(o.message), String(o.stack))
      try {
        out.push(JSON.stringify(e))
      } catch {
        out.push('[unserialisable]')
      }
      out.push(
        JSON.stringify(
          Object.getOwnPropertyNames(e).map((k) => [k, String((e as Record<string, unknown>)[k])]),
        ),
      )
      e = o.cause
    } else e = undefined
  }
  return out
}
