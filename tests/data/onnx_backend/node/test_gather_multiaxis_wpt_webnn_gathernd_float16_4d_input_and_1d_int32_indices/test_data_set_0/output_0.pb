
BoutputJzR>Q