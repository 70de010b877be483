#!/bin/bash
# Runs Qwen Code offline: qwen.sh ARGS... (from proj/qwen, HOME=home/qwen)
R=/work/research30
cd $R/proj/qwen
exec $R/offline.sh qwen 18931 env -i HOME=$R/home/qwen PATH=$R/npm/qwen/node_modules/.bin:/usr/bin:/bin TERM=dumb \
  OPENAI_BASE_URL=http://127.0.0.1:18931/v1 OPENAI_API_KEY=dummy OPENAI_MODEL=fake "$@"
