#!/usr/bin/env node
// The `vault-rag` command of the npm package: finds the binary of this
// platform's package and runs it (lib/launch.js).
'use strict';
require('../lib/launch.js').main();
