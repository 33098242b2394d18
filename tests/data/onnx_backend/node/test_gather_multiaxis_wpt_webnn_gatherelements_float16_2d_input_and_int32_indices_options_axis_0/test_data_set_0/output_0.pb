
BoutputJŠÎOÔzR{Q‘UÐÔ