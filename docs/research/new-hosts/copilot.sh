#!/bin/bash
# Runs Copilot CLI offline: copilot.sh ARGS... (from proj/copilot, HOME=home/copilot)
R=/work/research30
cd ${COPILOT_PROJ:-$R/proj/copilot}
exec $R/offline.sh copilot 18932 env -i HOME=$R/home/copilot PATH=$R/npm/copilot/node_modules/.bin:/usr/bin:/bin TERM=dumb \
  COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:18932/v1 COPILOT_PROVIDER_API_KEY=dummy COPILOT_MODEL=fake \
  COPILOT_AUTO_UPDATE=false "$@"
