export interface PackageJson { name: string, version: string, repository?: string | { url?: string } }
export type RegistryAnswer =
  | { status: 'missing' }
  | {
    status: 'found'
    manifest: { repository?: string | { url?: string }, version?: string, versions?: string | string[] }
  }
  | { status: 'error', detail: string }
export declare const repositoryOf: (repository: PackageJson['repository']) => string | undefined
export declare const decide: (pkg: PackageJson, registry: RegistryAnswer) => { ok: boolean, message: string }
export declare const askRegistry: (name: string, npm?: string) => RegistryAnswer
