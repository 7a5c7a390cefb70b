#!/usr/bin/env node
/**
 * The public API of each entry point of package.json `exports`, as API Extractor reports it, in
 * api/<name>.api.md: a change of the public surface shows in review as a change of that file.
 * API Extractor takes one entry point per run, so this runs it once per entry point; a new entry
 * point of `exports` gets its report without any change here.
 *
 * A type that a public signature uses must be exported: API Extractor's forgotten export
 * (ae-forgotten-export) fails the check. API Extractor sees one entry point at a time, so a type
 * another entry point exports counts as exported (the store types a `store:` option names come
 * from `middy-idempotency/store`), when the package declares only one type of that name.
 *
 * Usage (after `npm run build`, which the npm scripts run first):
 *   node scripts/api-report.mjs           check: exits 1 when a report differs from the API
 *                                         (`npm run api:check`, run by CI)
 *   node scripts/api-report.mjs --update  rewrites the reports (`npm run api:update`)
 */
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const reportFolder = join(repo, 'api')
const update = process.argv.includes('--update')
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
const unscopedName = pkg.name.replace(/^@[^/]+\//, '')

/** `.` → middy-idempotency, `./dynamodb` → middy-idempotency-dynamodb, with the declaration file of each. */
const entryPoints = Object.entries(pkg.exports)
  .filter(([subpath, target]) => subpath !== './package.json' && typeof target?.types === 'string')
  .map(([subpath, target]) => ({
    subpath,
    reportName: subpath === '.' ? unscopedName : `${unscopedName}-${subpath.slice(2).replaceAll('/', '-')}`,
    declarations: join(repo, target.types)
  }))

/**
 * For each name an entry point exports, the entry points that export it, kept only when the
 * package's declarations declare one top-level type or value of that name: a name declared twice
 * (two different types) is never taken for the other one.
 */
const exportersByName = (() => {
  const program = ts.createProgram(entryPoints.map((e) => e.declarations), {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, types: ['node'], skipLibCheck: true
  })
  const checker = program.getTypeChecker()
  const declared = new Map()
  const inDist = (file) => !relative(join(repo, 'dist'), file.fileName).startsWith('..')
  for (const file of program.getSourceFiles().filter(inDist)) {
    for (const statement of file.statements) {
      const names = ts.isVariableStatement(statement)
        ? statement.declarationList.declarations.map((d) => d.name.getText(file))
        : statement.name !== undefined && ts.isIdentifier(statement.name) ? [statement.name.text] : []
      for (const name of names) declared.set(name, (declared.get(name) ?? 0) + 1)
    }
  }
  const exporters = new Map()
  for (const { subpath, declarations } of entryPoints) {
    const entry = checker.getSymbolAtLocation(program.getSourceFile(declarations))
    for (const symbol of entry === undefined ? [] : checker.getExportsOfModule(entry)) {
      if (declared.get(symbol.name) === 1) exporters.set(symbol.name, [...(exporters.get(symbol.name) ?? []), subpath])
    }
  }
  return exporters
})()

/**
 * Excuses a forgotten export of `subpath` that another entry point exports (see the top of this
 * file). With --update, a report rewritten or created is what was asked for: said, not a warning.
 */
const judgeMessage = (subpath) => (message) => {
  if (update && ['console-api-report-copied', 'console-api-report-created'].includes(message.messageId)) {
    message.logLevel = 'info'
  }
  if (message.messageId !== 'ae-forgotten-export') return
  const name = /The symbol "([^"]+)"/.exec(message.text)?.[1]
  if ((exportersByName.get(name) ?? []).some((other) => other !== subpath)) message.logLevel = 'none'
}

const scratch = mkdtempSync(join(tmpdir(), 'api-report-'))
const problems = []
try {
  for (const { subpath, reportName, declarations } of entryPoints) {
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: repo,
        mainEntryPointFilePath: declarations,
        // The declarations are compiled already: only what reading them needs.
        compiler: {
          overrideTsconfig: {
            compilerOptions: {
              target: 'es2022',
              module: 'nodenext',
              moduleResolution: 'nodenext',
              lib: ['es2022'],
              types: ['node'],
              strict: true
            },
            files: [declarations]
          }
        },
        apiReport: { enabled: true, reportFileName: reportName, reportFolder, reportTempFolder: scratch },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        newlineKind: 'lf',
        messages: {
          // The package has one release level (no @alpha/@beta/@public tags). A forgotten export
          // is a warning, which fails the check (API Extractor's own default writes it into the
          // report, where a review can miss it).
          extractorMessageReporting: {
            'ae-missing-release-tag': { logLevel: 'none' },
            'ae-forgotten-export': { logLevel: 'warning', addToApiReportFile: false }
          }
        }
      },
      configObjectFullPath: join(repo, 'api-extractor.json'),
      packageJsonFullPath: join(repo, 'package.json')
    })
    const result = Extractor.invoke(config, {
      localBuild: update, showVerboseMessages: false, messageCallback: judgeMessage(subpath)
    })
    const label = `${pkg.name}${subpath === '.' ? '' : subpath.slice(1)}`
    if (!result.succeeded && result.apiReportChanged) {
      // What changed, before the scratch folder goes: CI's log then shows it.
      const reportFile = `${reportName}.api.md`
      spawnSync('diff', ['-u', join(reportFolder, reportFile), join(scratch, reportFile)], { stdio: 'inherit' })
    }
    if (!result.succeeded) {
      problems.push(result.apiReportChanged
        ? `${label}: the public API differs from api/${reportName}.api.md. ` +
          'If the change is meant, run `npm run api:update` and commit the report.'
        : `${label}: API Extractor reported ${result.errorCount} error(s) ` +
          `and ${result.warningCount} warning(s) (above)`)
    } else if (result.warningCount > 0) {
      problems.push(`${label}: API Extractor reported ${result.warningCount} warning(s) (above)`)
    } else {
      const verdict = update && result.apiReportChanged ? 'report rewritten' : 'matches'
      console.log(`api-report: ${label} ${verdict} api/${reportName}.api.md`)
    }
  }
  // A report whose entry point is gone.
  const expected = new Set(entryPoints.map((e) => `${e.reportName}.api.md`))
  for (const file of readdirSync(reportFolder).filter((f) => f.endsWith('.api.md') && !expected.has(f))) {
    if (update) {
      unlinkSync(join(reportFolder, file))
      console.log(`api-report: removed api/${file} (no such entry point in package.json exports)`)
    } else {
      problems.push(`api/${file} reports an entry point package.json no longer exports: run \`npm run api:update\``)
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}

if (problems.length > 0) {
  for (const problem of problems) console.error(`api-report: ${problem}`)
  process.exit(1)
}
