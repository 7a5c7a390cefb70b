/**
 * What the sources say about the public API, read with the TypeScript compiler's parser: the
 * properties of an options interface with their documented defaults, and the error classes the
 * package exports with their `statusCode`.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'

const parse = (root: string, file: string): ts.SourceFile =>
  ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022, true)

/**
 * The default a property documents: its `@default` tag, or else the project's short form, a
 * `[…]` closing its TSDoc comment. `undefined` when it documents none.
 */
const documentedDefault = (node: ts.Node): string | undefined => {
  const tag = ts.getJSDocTags(node).find((t) => t.tagName.text === 'default')
  if (tag !== undefined) return ts.getTextOfJSDocComment(tag.comment)?.trim()
  const doc = ts.getJSDocCommentsAndTags(node).find(ts.isJSDoc)
  const text = (ts.getTextOfJSDocComment(doc?.comment) ?? '').trim()
  if (!text.endsWith(']')) return undefined
  // Walk back to the `[` that opens the final bracket: a default may itself hold brackets (`headers["…"]`).
  let depth = 0
  for (let i = text.length - 1; i >= 0; i--) {
    if (text[i] === ']') depth++
    else if (text[i] === '[' && --depth === 0) return text.slice(i + 1, -1).trim()
  }
  return undefined
}

export interface OptionDoc {
  name: string
  required: boolean
  /** The documented default, `undefined` when there is none. */
  default: string | undefined
}

/** Every property of `interfaceName` in `file`, in source order. */
export const optionsOf = (root: string, file: string, interfaceName: string): OptionDoc[] => {
  const source = parse(root, file)
  const declaration = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === interfaceName)
  if (declaration === undefined) throw new Error(`${file} has no interface ${interfaceName}`)
  return declaration.members.filter(ts.isPropertySignature).map((member) => ({
    name: member.name.getText(source),
    required: member.questionToken === undefined,
    default: documentedDefault(member)
  }))
}

export interface ErrorDoc {
  name: string
  /** `409`, `400 or 500` (a union of literals), `any` (a number not known in advance), or `undefined` without one. */
  statusCode: string | undefined
}

const statusCodeOf = (declaration: ts.ClassDeclaration, source: ts.SourceFile): string | undefined => {
  const property = declaration.members.find((m): m is ts.PropertyDeclaration => ts.isPropertyDeclaration(m) && m.name.getText(source) === 'statusCode')
  if (property === undefined) return undefined
  if (property.initializer !== undefined && ts.isNumericLiteral(property.initializer)) return property.initializer.text
  const type = property.type
  const literals = type !== undefined && ts.isUnionTypeNode(type) ? type.types : type !== undefined ? [type] : []
  const values = literals.map((t) => (ts.isLiteralTypeNode(t) && ts.isNumericLiteral(t.literal) ? t.literal.text : undefined))
  return values.length > 0 && values.every((v) => v !== undefined) ? values.join(' or ') : 'any'
}

/** Every class the package's root entry point exports from `src/errors.ts`, with its `statusCode`. */
export const exportedErrors = (root: string): ErrorDoc[] => {
  const index = parse(root, 'src/index.ts')
  const errors = parse(root, 'src/errors.ts')
  const exported = index.statements
    .filter((s): s is ts.ExportDeclaration => ts.isExportDeclaration(s) && (s.moduleSpecifier as ts.StringLiteral | undefined)?.text === './errors.js')
    .flatMap((s) => (s.exportClause !== undefined && ts.isNamedExports(s.exportClause) ? [...s.exportClause.elements] : []))
    .filter((e) => !e.isTypeOnly)
    .map((e) => e.name.text)
  return exported.map((name) => {
    const declaration = errors.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === name)
    if (declaration === undefined) throw new Error(`src/index.ts exports ${name} from errors.ts, which declares no such class`)
    return { name, statusCode: statusCodeOf(declaration, errors) }
  })
}
