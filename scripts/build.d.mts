// Types of ./build.mjs for the tests that import it.

export declare const BUILD_INPUTS: readonly string[];
