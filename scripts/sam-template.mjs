/**
 * What `sam build` reads from a template to build a Node.js function with esbuild, and the
 * esbuild command line it makes of it, as the SAM CLI and its builder (aws-lambda-builders,
 * workflow `nodejs_npm_esbuild`) do:
 * - `Metadata.BuildProperties` keys go from PascalCase to snake_case (SAM), then to
 *   kebab-case flags: a string becomes `--key=value`, a list one `--key:item` per item, `true`
 *   a bare `--key`, `false` nothing; `EntryPoints` and `UseNpmCi` are not flags, and `Bundle`,
 *   `Platform` and `Outdir` are ignored (the builder sets them);
 * - without `EntryPoints`, the entry point is the handler's file part;
 * - the command is the entry points, then `--bundle --platform=node --outdir=<artifacts>`,
 *   `--target=es2020`, `--format=cjs` and `--minify` unless the properties set them, then the
 *   properties;
 * - `External` naming `./node_modules/*` marks every `dependencies` entry of package.json external.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { extname, join } from 'node:path'

/** js-yaml is already installed here (a dependency of eslint); nothing else reads YAML. */
const loadYaml = () => {
  try {
    return createRequire(import.meta.url)('js-yaml')
  } catch (error) {
    throw new Error('sam-template: js-yaml is not installed (npm ci installs it with eslint)', { cause: error })
  }
}

/** CloudFormation's short-form intrinsic functions, read as their long form (`!Ref X` → `{ Ref: X }`). */
const INTRINSICS = ['Ref', 'Condition', 'GetAtt', 'Sub', 'Join', 'Select', 'Split', 'If', 'Equals', 'Not', 'And', 'Or',
  'FindInMap', 'Base64', 'Cidr', 'GetAZs', 'ImportValue', 'Transform', 'ToJsonString', 'Length']

const cloudFormationSchema = (yaml) => yaml.DEFAULT_SCHEMA.extend(INTRINSICS.flatMap((name) =>
  ['scalar', 'sequence', 'mapping'].map((kind) => new yaml.Type(`!${name}`, {
    kind,
    construct: (data) => {
      const long = name === 'Ref' || name === 'Condition' ? name : `Fn::${name}`
      // `!GetAtt Table.Arn` is the scalar form of `Fn::GetAtt: [Table, Arn]`.
      if (name === 'GetAtt' && typeof data === 'string') return { [long]: data.split('.') }
      return { [long]: data }
    }
  }))))

/** Parses a SAM template, short-form intrinsic functions included. */
export const parseTemplate = (text) => {
  const yaml = loadYaml()
  return yaml.load(text, { schema: cloudFormationSchema(yaml) })
}

/**
 * The template's functions built by esbuild: `{ name, codeUri, handler, runtime, properties }`,
 * `properties` being `Metadata.BuildProperties` normalised as SAM hands them to the builder.
 */
export const esbuildFunctions = (template) => {
  const globals = template.Globals?.Function ?? {}
  return Object.entries(template.Resources ?? {})
    .filter(([, resource]) => resource.Type === 'AWS::Serverless::Function' &&
      resource.Metadata?.BuildMethod === 'esbuild')
    .map(([name, resource]) => {
      const props = { ...globals, ...resource.Properties }
      if (typeof props.CodeUri !== 'string') {
        throw new Error(`${name}: CodeUri must be a local path (found ${JSON.stringify(props.CodeUri)})`)
      }
      const properties = {}
      for (const [key, value] of Object.entries(resource.Metadata.BuildProperties ?? {})) {
        properties[key.replace(/(?<!^)(?=[A-Z])/g, '_').toLowerCase()] = value
      }
      if (properties.entry_points === undefined && typeof props.Handler === 'string') {
        properties.entry_points = [props.Handler.split('.')[0]]
      }
      return { name, codeUri: props.CodeUri, handler: props.Handler, runtime: props.Runtime, properties }
    })
}

const NOT_FLAGS = new Set(['use_npm_ci', 'entry_points'])
const SET_BY_BUILDER = new Set(['bundle', 'platform', 'outdir'])

/** An entry point as the builder passes it: as written when it has an extension, else with `.ts` or `.js`. */
const explicitEntry = (entry, workDir) => {
  if (extname(entry) !== '') {
    if (existsSync(join(workDir, entry))) return entry
    throw new Error(`entry point ${join(workDir, entry)} does not exist`)
  }
  const found = ['.ts', '.js'].find((ext) => existsSync(join(workDir, entry + ext)))
  if (found === undefined) throw new Error(`entry point ${join(workDir, entry)} does not exist`)
  return entry + found
}

const flag = (key, value) => {
  const name = key.replaceAll('_', '-')
  if (typeof value === 'boolean') return value ? [`--${name}`] : []
  if (typeof value === 'string') return [`--${name}=${value}`]
  if (Array.isArray(value)) return value.map((item) => `--${name}:${item}`)
  throw new Error(`BuildProperties ${key}: cannot make an esbuild flag of ${JSON.stringify(value)}`)
}

/** The esbuild arguments `sam build` runs in `workDir` (the copy of CodeUri) for one function. */
export const esbuildArgs = ({ properties }, workDir, outDir, manifest) => {
  const config = { ...properties }
  const entries = config.entry_points
  if (!Array.isArray(entries) || entries.length === 0) throw new Error('EntryPoints must be a non-empty list')
  const args = []
  if (Array.isArray(config.external) && config.external.includes('./node_modules/*')) {
    args.push(...Object.keys(manifest?.dependencies ?? {}).map((dep) => `--external:${dep}`))
    delete config.external
  }
  const command = [
    ...args,
    ...entries.map((entry) => explicitEntry(entry, workDir)),
    '--bundle',
    '--platform=node',
    `--outdir=${outDir}`
  ]
  if (!('target' in config)) command.push('--target=es2020')
  if (!('format' in config)) command.push('--format=cjs')
  if (!('minify' in config)) command.push('--minify')
  for (const [key, value] of Object.entries(config)) {
    if (!NOT_FLAGS.has(key) && !SET_BY_BUILDER.has(key)) command.push(...flag(key, value))
  }
  return command
}
