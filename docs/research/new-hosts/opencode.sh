#!/bin/bash
# Runs OpenCode offline: opencode.sh ARGS... (from proj/opencode, HOME=home/opencode)
R=/work/research30
cd ${OPENCODE_PROJ:-$R/proj/opencode}
exec $R/offline.sh opencode 18933 env -i HOME=$R/home/opencode PATH=$R/npm/opencode/node_modules/.bin:/usr/bin:/bin TERM=dumb \
  OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_SHARE=1 "$@"
