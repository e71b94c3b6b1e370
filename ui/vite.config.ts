import { defineConfig } from "vite";

// Preact through the automatic JSX runtime: no framework plugin needed.
export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { target: "es2022", outDir: "dist", emptyOutDir: true, sourcemap: false },
  clearScreen: false,
});
