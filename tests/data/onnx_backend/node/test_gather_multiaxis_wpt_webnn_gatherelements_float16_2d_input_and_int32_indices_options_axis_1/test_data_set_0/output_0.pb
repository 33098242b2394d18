
BoutputJOÔ!Ô½Ñ½ÑR{Q