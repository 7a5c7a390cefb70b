export declare const exportTargets: (pkg: Record<string, unknown>) => string[]
export declare const tarballProblems: (
  pkg: Record<string, unknown>,
  files: string[],
  read: (file: string) => string
) => string[]
