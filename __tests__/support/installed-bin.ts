import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

/**
 * The package as a user installs it: built into a staging folder of its own (never this
 * repository's dist/, which another test may be rebuilding), `npm pack`ed, and unpacked as
 * `node_modules/middy-idempotency` of throwaway projects whose other packages are links to this
 * repository's (offline and fast), with the bin linked into `node_modules/.bin` as npm links it,
 * from the packed package.json's `bin`.
 */
export const packPackage = (): { tarball: string, scratch: string } => {
  const scratch = mkdtempSync(join(tmpdir(), 'middy-idempotency-bin-'))
  const staging = join(scratch, 'staging')
  mkdirSync(staging)
  for (const file of ['package.json', 'README.md', 'LICENSE']) copyFileSync(file, join(staging, file))
  // --noCheck: the build's own emit without its type check (npm run typecheck, and the real
  // npm pack of package.test.ts, check the types); the same files, in 60% of the CPU time.
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--noCheck', '--outDir', join(staging, 'dist')], { stdio: 'pipe' })
  const output = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--loglevel=error', '--pack-destination', scratch], { cwd: staging, encoding: 'utf8' })
  const [pack] = JSON.parse(output.slice(output.indexOf('['))) as Array<{ filename: string }>
  return { tarball: join(scratch, pack?.filename ?? ''), scratch }
}

/** A project with the packed package installed and `packages` linked from this repository; the bin's path. */
export const consumerProject = (tarball: string, where: string, packages: readonly string[]): string => {
  const project = join(dirname(tarball), where)
  const installed = join(project, 'node_modules', 'middy-idempotency')
  mkdirSync(installed, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'])
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: where, private: true, type: 'module' }))
  for (const pkg of packages) {
    const target = join(project, 'node_modules', pkg)
    mkdirSync(dirname(target), { recursive: true })
    symlinkSync(realpathSync(join('node_modules', pkg)), target, 'dir')
  }
  const { bin } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { bin: Record<string, string> }
  const binDir = join(project, 'node_modules', '.bin')
  mkdirSync(binDir, { recursive: true })
  const script = resolve(installed, bin['middy-idempotency'] as string)
  chmodSync(script, 0o755)
  symlinkSync(script, join(binDir, 'middy-idempotency'))
  return join(binDir, 'middy-idempotency')
}

export interface BinResult { code: number | null, stdout: string, stderr: string }

/** Runs the installed bin as a user's shell would (its shebang, this Node first on PATH), in its project. */
export const runBin = async (bin: string, args: readonly string[], env: Record<string, string> = {}): Promise<BinResult> =>
  await new Promise((done, fail) => {
    const child = spawn(bin, args, {
      cwd: dirname(dirname(dirname(bin))),
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? tmpdir(), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env }
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.on('error', fail)
    child.on('close', (code) => { done({ code, stdout, stderr }) })
  })

export const removeScratch = (scratch: string): void => { rmSync(scratch, { recursive: true, force: true }) }
