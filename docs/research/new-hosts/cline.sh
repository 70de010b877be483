#!/bin/bash
# Runs Cline CLI offline: cline.sh ARGS... (from proj/cline, HOME=home/cline)
R=/work/research30
cd ${CLINE_PROJ:-$R/proj/cline}
exec $R/offline.sh cline 18934 env -i HOME=$R/home/cline PATH=$R/npm/cline/node_modules/.bin:/usr/bin:/bin TERM=dumb "$@"
