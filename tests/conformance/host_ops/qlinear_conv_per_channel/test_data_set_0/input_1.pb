Bx_scaleJ
ף<