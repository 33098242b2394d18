
BoutputJ∂–∂–qNM“zRS•UM“RÙRRR