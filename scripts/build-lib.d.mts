// Types of ./build-lib.mjs for the tests that import it.

export declare const STAMP_FILE: string;

export declare function fingerprint(root: string, inputs: readonly string[]): string;

export declare function currentStamp(root: string, entry?: string): string | null;

export declare function buildIfChanged(options: {
  root: string;
  inputs: readonly string[];
  build: (outDir: string) => void | Promise<void>;
  force?: boolean;
  entry?: string;
  pid?: number;
  keepRecentMs?: number;
}): Promise<{ built: false; stamp: string } | { built: true; stamp: string; dir: string }>;
